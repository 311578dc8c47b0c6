/* count-sve-main.c - the uncounted half of count-sve.c: passes vectors
 * whose every lane differs, and predicates that leave out a lane at each
 * end, to mixs as the thread's first counted call, and compares with
 * mixs_ref, count-sve.c built plain.  One thread: qemu-user 7.2 hangs in
 * pthread_create with SVE on. */
#include <arm_sve.h>
#include <stdio.h>

double mixs(svfloat32_t, svfloat32_t, svfloat32_t, svfloat32_t, svbool_t, svbool_t);
double mixs_ref(svfloat32_t, svfloat32_t, svfloat32_t, svfloat32_t, svbool_t, svbool_t);

int main(void)
{
    svbool_t all = svptrue_b32();
    svfloat32_t idx = svcvt_f32_s32_x(all, svindex_s32(1, 1));
    svfloat32_t a = svadd_n_f32_x(all, idx, 0.25f), b = svmul_n_f32_x(all, idx, 2.0f);
    svfloat32_t c = svdup_n_f32(3.0f), d = svadd_n_f32_x(all, idx, 0.5f);
    svbool_t p = svwhilelt_b32_s32(0, (int)svcntw() - 1), q = svwhilelt_b32_s32(1, (int)svcntw());
    double got = mixs(a, b, c, d, p, q), want = mixs_ref(a, b, c, d, p, q);
    printf("vector length %d bits: mixs %g, plain %g\n", (int)svcntb() * 8, got, want);
    return got != want;
}
