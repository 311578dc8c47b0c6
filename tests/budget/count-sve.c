/* count-sve.c - count-simd.c for SVE (aarch64, -march=armv8.2-a+sve): a
 * thread's first count (mode=count, TLS form) is in a function of the SVE
 * calling convention, whose arguments are in z0-z3 and p0-p1 at their
 * full vector length; arming the thread runs the runtime's slow path,
 * where any write of a q register zeroes a Z register beyond its first
 * 128 bits.  Built counted as mixs, and plain as mixs_ref (-Dmixs=mixs_ref)
 * for count-sve-main.c to compare with. */
#include <arm_sve.h>

__attribute__((noinline)) double mixs(svfloat32_t v0, svfloat32_t v1, svfloat32_t v2, svfloat32_t v3, svbool_t p0,
                                      svbool_t p1)
{
    svfloat32_t s = svadd_f32_m(p0, v0, v1);
    s = svadd_f32_m(p1, s, v2);
    s = svmul_f32_m(svptrue_b32(), s, v3);
    return (double)svaddv_f32(svptrue_b32(), s);
}
