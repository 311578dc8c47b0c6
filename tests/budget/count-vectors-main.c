/* count-vectors-main.c - the uncounted half of count-vectors.c: two
 * threads each pass (1 ... 8) to sum8 as their first counted call and
 * check the sum.  Exits 77 where the CPU has no AVX2. */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>

float sum8(__m256 a);

static void *worker(void *arg)
{
    float s = sum8(_mm256_setr_ps(1, 2, 3, 4, 5, 6, 7, 8));
    *(float *)arg = s;
    return NULL;
}

int main(void)
{
    if (!__builtin_cpu_supports("avx2")) {
        puts("SKIP: no AVX2");
        return 77;
    }
    int bad = 0;
    for (int i = 0; i < 2; i++) {
        float s = 0;
        pthread_t t;
        if (pthread_create(&t, NULL, worker, &s) || pthread_join(t, NULL))
            return 2;
        printf("thread %d: sum8(1 ... 8) = %g\n", i, s);
        bad |= s != 36;
    }
    return bad;
}
