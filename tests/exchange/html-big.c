/* html-big.c - a run with many calls for the HTML timeline (check-html.py):
 * two threads, each ROUNDS frames of nested calls of varied lengths, a mark
 * every 1000 frames and a counter.  argv[1] = frames per thread (default
 * 100000: 2 x 100000 x 6 calls = 1.2 M calls with main and the workers). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <instr/instr.h>

static volatile unsigned sink;
static long rounds = 100000;

__attribute__((noinline)) static void leaf(unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        sink += i;
}

__attribute__((noinline)) static void middle(unsigned n)
{
    leaf(n);
    leaf(3 * n);
}

__attribute__((noinline)) static void frame(long i)
{
    middle((unsigned)(i % 7) * 10 + 5);
    leaf((unsigned)(i % 13) * 20);
    middle(2);
}

static void *worker(void *arg)
{
    const char *tick = arg;
    for (long i = 0; i < rounds; i++) {
        if (i % 1000 == 0) {
            instr_event(tick);
            instr_counter("frames done", i);
        }
        frame(i);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        rounds = atol(argv[1]);
    pthread_t a, b;
    pthread_create(&a, NULL, worker, "tick A");
    pthread_create(&b, NULL, worker, "tick B");
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("%u\n", sink & 1);
    return 0;
}
