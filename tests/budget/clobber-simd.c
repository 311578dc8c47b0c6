/* clobber-simd.c - an LD_PRELOAD shim for count-simd (aarch64): the
 * pthread_setspecific the runtime calls while it arms a thread first
 * writes every FP/SIMD register and x9-x15, as AAPCS64 lets a callee (the
 * low halves of v8-v15 excepted, which the compiler saves here), so that
 * the runtime gives control back to counted code with none of its
 * caller's q registers left. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>

int pthread_setspecific(pthread_key_t key, const void *value)
{
    static int (*real)(pthread_key_t, const void *);
    if (!real)
        real = (int (*)(pthread_key_t, const void *))dlsym(RTLD_NEXT, "pthread_setspecific");
    __asm__ volatile("movi\tv0.16b, #0x5a\n\tmovi\tv1.16b, "
                     "#0x5a\n\tmovi\tv2.16b, #0x5a\n\tmovi\tv3.16b, #0x5a\n\t"
                     "movi\tv4.16b, #0x5a\n\tmovi\tv5.16b, "
                     "#0x5a\n\tmovi\tv6.16b, #0x5a\n\tmovi\tv7.16b, #0x5a\n\t"
                     "movi\tv8.16b, #0x5a\n\tmovi\tv9.16b, "
                     "#0x5a\n\tmovi\tv10.16b, #0x5a\n\tmovi\tv11.16b, #0x5a\n\t"
                     "movi\tv12.16b, #0x5a\n\tmovi\tv13.16b, "
                     "#0x5a\n\tmovi\tv14.16b, #0x5a\n\tmovi\tv15.16b, #0x5a\n\t"
                     "movi\tv16.16b, #0x5a\n\tmovi\tv17.16b, "
                     "#0x5a\n\tmovi\tv18.16b, #0x5a\n\tmovi\tv19.16b, #0x5a\n\t"
                     "movi\tv20.16b, #0x5a\n\tmovi\tv21.16b, "
                     "#0x5a\n\tmovi\tv22.16b, #0x5a\n\tmovi\tv23.16b, #0x5a\n\t"
                     "movi\tv24.16b, #0x5a\n\tmovi\tv25.16b, "
                     "#0x5a\n\tmovi\tv26.16b, #0x5a\n\tmovi\tv27.16b, #0x5a\n\t"
                     "movi\tv28.16b, #0x5a\n\tmovi\tv29.16b, "
                     "#0x5a\n\tmovi\tv30.16b, #0x5a\n\tmovi\tv31.16b, #0x5a\n\t"
                     "mov\tx9, #0x5a5a\n\tmov\tx10, x9\n\tmov\tx11, "
                     "x9\n\tmov\tx12, x9\n\tmov\tx13, x9\n\t"
                     "mov\tx14, x9\n\tmov\tx15, x9" ::
                         : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13",
                           "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26",
                           "v27", "v28", "v29", "v30", "v31", "x9", "x10", "x11", "x12", "x13", "x14", "x15");
    return real(key, value);
}
