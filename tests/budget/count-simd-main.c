/* count-simd-main.c - the uncounted half of count-simd.c: two threads
 * each pass distinct values in x0-x7 and q0-q7 to mix as their first
 * counted call, and compare with mix_ref, count-simd.c built plain. */
#include <arm_neon.h>
#include <pthread.h>
#include <stdio.h>

#define MIX_ARGS(f, k)                                                                                                 \
    f(1 + (k), 2 + (k), 3 + (k), 4 + (k), 5 + (k), 6 + (k), 7 + (k), 8 + (k), vdupq_n_f32(0.5f + (k)),                 \
      (float32x4_t){1, 2, 3, 4}, (float32x4_t){5, 6, 7, 8}, (float32x4_t){9, 10, 11, 12},                              \
      (float32x4_t){13, 14, 15, 16}, (float32x4_t){17, 18, 19, 20}, (float32x4_t){21, 22, 23, 24},                     \
      (float32x4_t){25, 26, 27, 28 + (k)})

double mix(long, long, long, long, long, long, long, long, float32x4_t, float32x4_t, float32x4_t, float32x4_t,
           float32x4_t, float32x4_t, float32x4_t, float32x4_t);
double mix_ref(long, long, long, long, long, long, long, long, float32x4_t, float32x4_t, float32x4_t, float32x4_t,
               float32x4_t, float32x4_t, float32x4_t, float32x4_t);

static void *worker(void *arg)
{
    long k = *(long *)arg;
    double got = MIX_ARGS(mix, k), want = MIX_ARGS(mix_ref, k);
    printf("thread %ld: mix %g, plain %g\n", k, got, want);
    *(long *)arg = got != want;
    return NULL;
}

int main(void)
{
    long bad = 0;
    for (long i = 0; i < 2; i++) {
        long k = i;
        pthread_t t;
        if (pthread_create(&t, NULL, worker, &k) || pthread_join(t, NULL))
            return 2;
        bad |= k;
    }
    return bad != 0;
}
