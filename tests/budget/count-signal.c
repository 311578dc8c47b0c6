/* count-signal.c - count mode's increment against a signal handler of the
 * same thread (check-count.sh): the main thread calls f in a tight loop
 * until a SIGALRM handler, every 200 us, has run 1000 times, calling f 50
 * times each.  Prints the calls of f it made; the dump must say the same.
 * A handler that counts between the increment's load and its store is
 * lost unless the increment is one instruction (x86-64) or retries
 * (aarch64's exclusive pair). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#define SIGNALS 1000
#define PER_SIGNAL 50

volatile long sink;
static volatile long handled;

__attribute__((noinline)) int f(int x)
{
    return x * 2 + 1;
}

static void on_alarm(int s)
{
    (void)s;
    for (int i = 0; i < PER_SIGNAL; i++)
        sink += f(i);
    handled++;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 200}, {0, 200}};
    setitimer(ITIMER_REAL, &it, NULL);
    long calls = 0;
    while (handled < SIGNALS)
        sink += f((int)calls++);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    sigset_t alrm; /* a SIGALRM still pending stays so: handled is final */
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    sigprocmask(SIG_BLOCK, &alrm, NULL);
    printf("signals %ld, calls in the loop %ld\nexpected f %ld\n", handled, calls, calls + handled * PER_SIGNAL);
    return 0;
}
