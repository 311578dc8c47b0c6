/* hybrid-busy.c - built with the plugin: CPU time split about 70/30 between
 * heavy() and light().  Arguments: rounds (default 300), then "tiny": light()
 * also calls tiny() every 64 iterations, so the events fill chunks (the
 * sampler drains at chunk switches) and many samples land in the hooks. */
#include <stdlib.h>

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

static int use_tiny;

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
    if (argc > 2)
        use_tiny = 1;
    for (unsigned long r = 0; r < rounds; r++) {
        heavy(1400000);
        light(600000);
    }
    return 0;
}
