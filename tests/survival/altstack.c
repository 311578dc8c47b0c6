/* altstack.c - signal handling a program sets up for itself (issue 14 item
 * 10b): run instrumented, it must behave as it does plain.
 *
 *   altstack SIZE   handlers on a small alternate signal stack (sigaltstack
 *                   of SIZE bytes, SA_ONSTACK) that call instrumented
 *                   functions: raised synchronously, and from a timer that
 *                   interrupts instrumented code (hooks included).
 *   dispositions    prints the program's view of its fatal-signal
 *                   dispositions (sigaction(sig, NULL, &old)): "dfl" where
 *                   it installed nothing.
 * Prints "# KEY N" lines the checker compares with the report.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static volatile long sink;
static volatile sig_atomic_t handled;

__attribute__((noinline)) void leaf(long i) { sink += i; }

__attribute__((noinline)) void in_handler(int depth)
{
    leaf(depth);
    if (depth > 0)
        in_handler(depth - 1);
}

static void on_signal(int sig)
{
    (void)sig;
    in_handler(3);
    handled++;
}

__attribute__((noinline)) void work(long i)
{
    leaf(i);
    leaf(i + 1);
}

static int altstack(size_t size)
{
    stack_t ss = {.ss_sp = malloc(size), .ss_size = size};
    if (!ss.ss_sp || sigaltstack(&ss, NULL))
        return 2;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_ONSTACK | SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGALRM, &sa, NULL);
    long raised = 0;
    for (int i = 0; i < 200; i++, raised++)
        raise(SIGUSR1);
    struct itimerval it = {{0, 200}, {0, 200}};
    setitimer(ITIMER_REAL, &it, NULL);
    long calls = 0;
    while (handled < raised + 300)
        work(calls++);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    long h = handled;
    /* leaf: twice per work, once per in_handler level (4 per signal) */
    printf("# on_signal %ld\n# work %ld\n# leaf %ld\n", h, calls, 2 * calls + 4 * h);
    return 0;
}

static int dispositions(void)
{
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS,
                               SIGTERM, SIGINT, SIGQUIT, SIGHUP};
    for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old))
            return 2;
        const char *what = old.sa_flags & SA_SIGINFO ? "handler"
                           : old.sa_handler == SIG_DFL ? "dfl"
                           : old.sa_handler == SIG_IGN ? "ign" : "handler";
        printf("%s %s\n", strsignal(sigs[i]), what);
    }
    work(1);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "altstack") == 0)
        return altstack((size_t)atol(argv[2]));
    if (argc > 1 && strcmp(argv[1], "dispositions") == 0)
        return dispositions();
    return 2;
}
