/* coroutines.c - a thread that switches stacks itself (issue 14 item 7).
 *
 * main and two coroutines, each on a stack of its own (mmap'd, 4 MiB, the
 * size of a thread's stack), pass control round-robin with swapcontext:
 * main -> co1 -> co2 -> main, N rounds.  Each side calls a trivial function
 * (tiny) and a switching function (ping, pong1, pong2: tiny + swapcontext).
 * Before the rounds, a calibration loop calls ping_cal N times: the same
 * shape as ping (tiny and one library call, rand_r) without the switch, so
 * the checker compares per-call times of the same program, never absolute
 * times.  Prints "# KEY N" lines: the calls each function made.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>

#define STACK_SIZE (4u << 20)

static ucontext_t main_ctx, co1_ctx, co2_ctx;
static volatile long sink;
static unsigned seed = 1;
static long rounds;

__attribute__((noinline)) void tiny(long i) { sink += i; }

__attribute__((noinline)) void ping_cal(long i)
{
    tiny(i);
    sink += rand_r(&seed);
}

__attribute__((noinline)) void ping(long i)
{
    tiny(i);
    swapcontext(&main_ctx, &co1_ctx);
}

__attribute__((noinline)) void pong1(long i)
{
    tiny(i);
    swapcontext(&co1_ctx, &co2_ctx);
}

__attribute__((noinline)) void pong2(long i)
{
    tiny(i);
    swapcontext(&co2_ctx, &main_ctx);
}

static void co1_body(void)
{
    for (long i = 0;; i++)
        pong1(i);
}

static void co2_body(void)
{
    for (long i = 0;; i++)
        pong2(i);
}

static int make(ucontext_t *c, void (*fn)(void))
{
    void *stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED || getcontext(c))
        return -1;
    c->uc_stack.ss_sp = stack;
    c->uc_stack.ss_size = STACK_SIZE;
    c->uc_link = &main_ctx;
    makecontext(c, fn, 0);
    return 0;
}

int main(int argc, char **argv)
{
    rounds = argc > 1 ? atol(argv[1]) : 100000;
    if (make(&co1_ctx, co1_body) || make(&co2_ctx, co2_body))
        return 2;
    for (long i = 0; i < rounds; i++)
        ping_cal(i);
    for (long i = 0; i < rounds; i++)
        ping(i);
    printf("# ping_cal %ld\n# ping %ld\n# pong1 %ld\n# pong2 %ld\n# tiny %ld\n", rounds, rounds,
           rounds, rounds, 4 * rounds);
    return 0;
}
