/* hybrid-busy.c - built with the plugin: CPU time split about 70/30 between
 * heavy() and light().  Arguments: rounds (default 300), then "tiny": light()
 * also calls tiny() every 64 iterations, so the events fill chunks (the
 * sampler drains at chunk switches) and many samples land in the hooks; or
 * "libc": each round also fills a buffer with libc's memset (uninstrumented
 * code under a call-site frame), and is 16 times longer: a round of about
 * a millisecond, the sampling period, locked the samples to one phase of
 * it (moire), so each function got a share that drifted from run to run.
 * Or "dl LIB": after the first round, dlopen LIB (uninstrumented,
 * hybrid-dl-lib.c) and call its dl_busy() through a pointer each round
 * (a library mapped after the sampler started); rounds 8 times longer, for
 * the same reason.  Or "long": rounds 16 times longer, nothing else (the
 * plain split, without the moire of rounds as long as the sampling
 * period: 300 rounds of 0.6 ms once gave heavy 63 % of the samples
 * against 75 % of the on-CPU time). */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

static volatile unsigned long sink;

__attribute__((noinline)) void tiny(unsigned long i)
{
    sink ^= i;
}

__attribute__((noinline)) void heavy(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        sink += i * i;
}

static int use_tiny, use_libc, use_long;
static char *buf;
static void (*dl_busy)(unsigned long);

__attribute__((noinline)) void light(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++) {
        sink ^= i + 7;
        if (use_tiny && (i & 63) == 0)
            tiny(i);
    }
}

int main(int argc, char **argv)
{
    unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 300;
    const char *lib = NULL;
    if (argc > 2 && !strcmp(argv[2], "libc"))
        use_libc = 1;
    else if (argc > 2 && !strcmp(argv[2], "long"))
        use_long = 1;
    else if (argc > 3 && !strcmp(argv[2], "dl"))
        lib = argv[3];
    else if (argc > 2)
        use_tiny = 1;
    size_t bufsize = (size_t)8 << 20;
    if (use_libc && !(buf = malloc(bufsize)))
        return 1;
    unsigned long m = use_libc || use_long ? 16 : lib ? 8 : 1;
    for (unsigned long r = 0; r < rounds; r++) {
        if (lib && r == 1) {
            void *h = dlopen(lib, RTLD_NOW);
            if (!h || !(dl_busy = (void (*)(unsigned long))dlsym(h, "dl_busy")))
                return 2;
        }
        heavy(1400000 * m);
        light(600000 * m);
        if (dl_busy)
            dl_busy(900000 * m);
        if (use_libc) {
            for (unsigned long k = 0; k < 4 * m; k++)
                memset(buf, (int)(r + k), bufsize);
            sink += (unsigned char)buf[r % bufsize];
        }
    }
    return 0;
}
