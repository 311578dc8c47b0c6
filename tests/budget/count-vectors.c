/* count-vectors.c - a thread's first count (mode=count, TLS form) is in a
 * function whose vector argument is still in its register, all 256 bits
 * of ymm0: arming the thread runs the runtime's slow path, which calls
 * libc, whose AVX2 routines end in vzeroupper; the argument must come
 * back whole.  Counted; its threads start in count-vectors-main.c, built
 * without the plugin, so sum8 is where each thread arms. */
#include <immintrin.h>

__attribute__((noinline)) float sum8(__m256 a)
{
    float f[8], s = 0;
    _mm256_storeu_ps(f, a);
    for (int i = 0; i < 8; i++)
        s += f[i];
    return s;
}
