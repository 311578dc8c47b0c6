/* hybrid-dl-lib.c - built without the plugin, dlopen'ed by hybrid-busy
 * ("dl LIB"): uninstrumented code under an indirect call-site frame, in a
 * library mapped after the sampler started. */
static volatile unsigned long sink;

__attribute__((noinline)) void dl_busy(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        sink += i ^ (i >> 3);
}
