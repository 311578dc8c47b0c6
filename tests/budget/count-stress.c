/* count-stress.c - count mode under churn (check-count.sh): 1000 threads in
 * waves of 20, a third ending with pthread_exit, a third cancelled, while
 * a 5 kHz SIGALRM handler calls f too.  Prints the calls of f it made;
 * the dump must say the same.
 *
 * A cancelled thread waits in usleep with SIGALRM blocked: glibc runs a
 * cancellation point with asynchronous cancellation on, and a handler
 * that interrupts it inherits that, so a cancel could end the thread
 * inside the handler, after its f and before its handled++ (the dump one
 * call above what the program thought it made: 10 runs in 639 under
 * qemu, either CPU), or as the handler returned, at qemu-user's sigreturn
 * trampoline, from which libgcc's fallback unwinder reads the wrong
 * signal frame and faults (6 in 639).  A handler that starts and does not
 * finish makes the program fail rather than print a count. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
volatile long sink;
long entered, handled;
__attribute__((noinline)) int f(int x) { return x * 2 + 1; }
/* Atomic: the handler may run in two threads at once. */
static void on_alarm(int s)
{
    (void)s;
    __atomic_fetch_add(&entered, 1, __ATOMIC_RELAXED);
    sink += f(1);
    __atomic_fetch_add(&handled, 1, __ATOMIC_RELAXED);
}
static void *worker(void *a)
{
    long n = (long)a;
    for (int i = 0; i < 1000; i++)
        sink += f(i);
    if (n % 3 == 1)
        pthread_exit(NULL);
    if (n % 3 == 2) {
        sigset_t alrm;
        sigemptyset(&alrm);
        sigaddset(&alrm, SIGALRM);
        for (;;) {
            pthread_testcancel();
            pthread_sigmask(SIG_BLOCK, &alrm, NULL);
            usleep(100);
            pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
        }
    }
    return NULL;
}
int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 200}, {0, 200}};
    setitimer(ITIMER_REAL, &it, NULL);
    long total_threads = 0;
    for (int wave = 0; wave < 50; wave++) {
        pthread_t t[20];
        for (long i = 0; i < 20; i++)
            while (pthread_create(&t[i], NULL, worker, (void *)i)) ;
        for (int i = 0; i < 20; i++) {
            if (i % 3 == 2) { usleep(200); pthread_cancel(t[i]); }
            pthread_join(t[i], NULL);
        }
        total_threads += 20;
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    sigset_t alrm; /* a SIGALRM still pending stays so: handled is final */
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alrm, NULL);
    for (int i = 0; i < 10; i++) sink += f(i);
    if (entered != handled) {
        fprintf(stderr, "count-stress: %ld of %ld SIGALRM handlers did not finish (a thread ended inside one): "
                        "the calls of f made are not known\n", entered - handled, entered);
        return 1;
    }
    printf("expected f %ld\n", total_threads * 1000 + handled + 10);
    return 0;
}
