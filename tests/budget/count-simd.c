/* count-simd.c - aarch64's count-vectors.c: a thread's first count
 * (mode=count, TLS form) is in a function whose arguments are still in
 * x0-x7 and in the whole of q0-q7: arming the thread runs the runtime's
 * slow path, which calls libc (clobber-simd.c writes every q register
 * there, as libc's SIMD string routines may); the arguments must come
 * back whole.  Built counted as mix, and plain as mix_ref
 * (-Dmix=mix_ref) for count-simd-main.c to compare with. */
#include <arm_neon.h>

__attribute__((noinline)) double mix(long a0, long a1, long a2, long a3, long a4, long a5, long a6, long a7,
                                     float32x4_t v0, float32x4_t v1, float32x4_t v2, float32x4_t v3, float32x4_t v4,
                                     float32x4_t v5, float32x4_t v6, float32x4_t v7)
{
    long a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    float32x4_t v[8] = {v0, v1, v2, v3, v4, v5, v6, v7};
    double s = 0;
    for (int i = 0; i < 8; i++) {
        s += (double)(i + 1) * (double)a[i];
        for (int l = 0; l < 4; l++)
            s += (double)(i + 1) * (l + 1) * v[i][l];
    }
    return s;
}
