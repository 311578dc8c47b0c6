/* count-sve-main.c - the uncounted half of count-sve.c: two threads each
 * pass vectors whose every lane differs, and predicates that leave out a
 * lane at each end, to mixs as their first counted call, and compare with
 * mixs_ref, count-sve.c built plain. */
#include <arm_sve.h>
#include <pthread.h>
#include <stdio.h>

double mixs(svfloat32_t, svfloat32_t, svfloat32_t, svfloat32_t, svbool_t, svbool_t);
double mixs_ref(svfloat32_t, svfloat32_t, svfloat32_t, svfloat32_t, svbool_t, svbool_t);

static void *worker(void *arg)
{
    long k = *(long *)arg;
    svbool_t all = svptrue_b32();
    svfloat32_t idx = svcvt_f32_s32_x(all, svindex_s32(1, 1));
    svfloat32_t a = svadd_n_f32_x(all, idx, 0.25f + (float)k), b = svmul_n_f32_x(all, idx, 2.0f);
    svfloat32_t c = svdup_n_f32(3.0f + (float)k), d = svadd_n_f32_x(all, idx, 0.5f);
    svbool_t p = svwhilelt_b32_s32(0, (int)svcntw() - 1), q = svwhilelt_b32_s32(1, (int)svcntw());
    double got = mixs(a, b, c, d, p, q), want = mixs_ref(a, b, c, d, p, q);
    printf("thread %ld, vector length %d bits: mixs %g, plain %g\n", k, (int)svcntb() * 8, got, want);
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
