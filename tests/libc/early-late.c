/* early-late.c - code that runs at the edges of the runtime's view (issue
 * 38 §2): a .preinit_array function, before any constructor binds the
 * hooks (not recorded: the report must say so), and pthread_key
 * destructors at thread exit, which run after the runtime's own key's
 * (recorded).  Each of THREADS threads sets two keys; key a's destructor
 * calls in_destructor once; key b's sets its value again once, so it runs
 * in a second round too: 3 calls of in_destructor per thread.  Prints the
 * calls it made. */
#include <pthread.h>
#include <stdio.h>

#define THREADS 4

static volatile int sink;
static int early_calls, destructor_calls;
static pthread_key_t key_a, key_b;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void in_preinit(void)
{
    sink++;
    early_calls++;
}

static void preinit(int argc, char **argv, char **envp)
{
    (void)argc, (void)argv, (void)envp;
    in_preinit();
}
__attribute__((section(".preinit_array"), used)) static void (*const preinit_fn)(int, char **, char **) = preinit;

__attribute__((noinline)) static void in_destructor(void)
{
    pthread_mutex_lock(&lock);
    destructor_calls++;
    pthread_mutex_unlock(&lock);
}

static void destroy_a(void *v)
{
    (void)v;
    in_destructor();
}

static void destroy_b(void *v)
{
    in_destructor();
    if (v == (void *)1)
        pthread_setspecific(key_b, (void *)2); /* once more, next round */
}

static void *run(void *arg)
{
    (void)arg;
    pthread_setspecific(key_a, (void *)1);
    pthread_setspecific(key_b, (void *)1);
    sink++;
    return NULL;
}

int main(void)
{
    pthread_key_create(&key_a, destroy_a);
    pthread_key_create(&key_b, destroy_b);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, run, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    printf("in_preinit %d\nin_destructor %d\n", early_calls, destructor_calls);
    return 0;
}
