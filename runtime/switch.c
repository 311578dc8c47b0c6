/* switch.c - instr_start / instr_stop, INSTR_START=off and INSTR_SIGNAL:
 * the run-time recording switch, on every build.
 *
 * Such a module's functions test one word at their entry, slot
 * INSTR_SLOT_ON of the module's hook table, and run their hooked copy
 * when it is nonzero, their plain body when it is zero
 * (plugin/pass-switch.cc).  Every bound table is remembered here, so a
 * switch writes the word of each.  A relaxed store: a thread sees the new
 * value at some next function entry, which is all the switch promises
 * (a hooked copy already running finishes hooked, closing its frames).
 * Code compiled without switchable has the slot too and never reads it:
 * its hooks keep running, and recording off is decided in their slow
 * path, as a trigger's is (filter.c, instr__filter_switch): from the first
 * switch off on, every hook of the process takes the slow path (a few ns
 * a call more), and calls entered while off are not recorded and counted
 * (the header's filtered_off).  With INSTR_TRIGGER set the words stay on:
 * a trigger function must run its hooks to switch recording on, so the
 * switch is the filters' alone.
 *
 * INSTR_SIGNAL=SIG: that signal toggles the switch from outside (`kill
 * -USR2 PID`, perf's control fd in a word).  Its handler takes no lock:
 * the tables are only ever appended to (an unloaded module's entry is
 * cleared, never moved), it skips a table whose page is no longer mapped
 * (mincore), and every writer of the words writes the state it reads and
 * writes them all again if the state changed meanwhile, so an interrupted
 * instr_start and the handler end with the words the last state says. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "detector.h"
#include "internal.h"

/* More modules than this: the later ones keep the state they were bound
 * in (said once in the log). */
#define SWITCH_MODULES 1024

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static instr_hook_fn *tables[SWITCH_MODULES]; /* NULL: a module unloaded */
static unsigned ntables;                      /* atomic: read by the handler */
static int state = -1; /* 1 on, 0 off; -1: INSTR_START not read yet */
static int unswitchable; /* a function without INSTR_FN_SWITCHABLE was registered (atomic) */

static void set_slot(instr_hook_fn *table, int on)
{
    __atomic_store_n(&table[INSTR_SLOT_ON], (instr_hook_fn)(uintptr_t)on, __ATOMIC_RELAXED);
}

/* Whether the page of p is mapped (an unloaded module's is not). */
static int mapped(const void *p)
{
    long pg = sysconf(_SC_PAGESIZE);
    unsigned char v;
    /* never trapped by sud: SIGSYS inside this handler is the detector's */
    return pg > 0 && instr__own_syscall(SYS_mincore, (long)((uintptr_t)p & ~(uintptr_t)(pg - 1)), 1, (long)&v) == 0;
}

/* Every bound table's word to the state, again while it changes under us
 * (the handler may run between this thread's load and its stores). */
static void write_words(int check_mapped)
{
    int s, joining;
    do {
        s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
        joining = __atomic_load_n(&instr__filter.switched, __ATOMIC_RELAXED);
        unsigned n = __atomic_load_n(&ntables, __ATOMIC_ACQUIRE);
        for (unsigned i = 0; i < n && i < SWITCH_MODULES; i++) {
            instr_hook_fn *t = __atomic_load_n(&tables[i], __ATOMIC_RELAXED);
            if (t && (!check_mapped || mapped(t))) {
                set_slot(t, s || instr__filter.triggers);
                if (joining && t[INSTR_SLOT_ENTER] != instr__hook_enter_joining)
                    instr__hooks_join(t);
            }
        }
    } while (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != s);
}

/* The state is now s: the filters follow it, and while it is off, code
 * the words cannot turn off filters (the tables' hooks join it). */
static void follow(int s)
{
    instr__filter_switch(s);
    if (!s && __atomic_load_n(&unswitchable, __ATOMIC_RELAXED))
        instr__filter_join();
}

void instr__switch_unswitchable(void)
{
    if (__atomic_exchange_n(&unswitchable, 1, __ATOMIC_RELAXED))
        return;
    if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == 0) {
        instr__filter_join();
        write_words(0);
    }
}

/* INSTR_SIGNAL's handler: toggle, write the words, and say so in the
 * thread's stream (api.c refuses inside a hook; a thread with no state
 * yet gets one, as an instrumented handler's first hook would). */
static void on_signal(int sig)
{
    (void)sig;
    int saved = errno;
    int was = __atomic_load_n(&state, __ATOMIC_ACQUIRE), now = was != 1;
    __atomic_store_n(&state, now, __ATOMIC_RELEASE);
    follow(now);
    write_words(1);
    instr__api_switched(now);
    errno = saved;
}

/* INSTR_SIGNAL: USR1, USR2, HUP, WINCH, RTMIN or RTMIN+N, each also with
 * SIG before it and in any case (usr2, SIGusr2), or a number.  The signals
 * a program would rather keep (the fatal ones, SIGKILL, SIGSTOP) are
 * refused. */
static int parse_signal(const char *e)
{
    const char *n = strncasecmp(e, "SIG", 3) ? e : e + 3;
    static const struct {
        const char *name;
        int sig;
    } names[] = {{"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"HUP", SIGHUP}, {"WINCH", SIGWINCH}};
    char *end;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcasecmp(n, names[i].name))
            return names[i].sig;
    if (!strncasecmp(n, "RTMIN+", 6) || !strcasecmp(n, "RTMIN")) {
        long k = n[5] ? strtol(n + 6, &end, 10) : 0;
        return (n[5] && (*end || end == n + 6)) || k < 0 || SIGRTMIN + k > SIGRTMAX ? -1 : SIGRTMIN + (int)k;
    }
    long v = strtol(e, &end, 10);
    if (*end || end == e)
        return -1;
    return v == SIGUSR1 || v == SIGUSR2 || v == SIGHUP || v == SIGWINCH || (v >= SIGRTMIN && v <= SIGRTMAX)
               ? (int)v
               : -1;
}

static void install_signal(void)
{
    const char *e = secure_getenv("INSTR_SIGNAL");
    if (!e || !*e)
        return;
    int sig = parse_signal(e);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (sig < 0)
        instr__say("INSTR_SIGNAL=", e, " is not USR1, USR2, HUP, WINCH, RTMIN+N or their number", "; no signal switches");
    else if (sigaction(sig, &sa, NULL))
        instr__say("INSTR_SIGNAL=", e, ": sigaction failed", "; no signal switches");
}

/* INSTR_START: "off" begins stopped; unset, empty or "on" begins started.
 * Then INSTR_SIGNAL's handler, once. */
static void read_start(void)
{
    const char *e = secure_getenv("INSTR_START");
    int s = 1;
    if (e && !strcmp(e, "off"))
        s = 0;
    else if (e && *e && strcmp(e, "on"))
        instr__say("INSTR_START=", e, " is neither on nor off", "; starting on");
    __atomic_store_n(&state, s, __ATOMIC_RELEASE);
    if (!s)
        follow(0);
    install_signal();
}

void instr__switch_bind(instr_hook_fn *table, int recording)
{
    pthread_mutex_lock(&lock);
    if (state < 0)
        read_start();
    /* Not recording: the hooks are no-ops, the plain bodies are cheaper.
     * Recording: the state's word, and the joining hooks once the switch
     * went off (write_words). */
    if (!recording) {
        set_slot(table, 0);
        pthread_mutex_unlock(&lock);
        return;
    }
    unsigned n = __atomic_load_n(&ntables, __ATOMIC_RELAXED);
    if (n < SWITCH_MODULES) {
        tables[n] = table;
        __atomic_store_n(&ntables, n + 1, __ATOMIC_RELEASE);
        write_words(0); /* its word too, as the state now says */
    } else {
        set_slot(table, __atomic_load_n(&state, __ATOMIC_ACQUIRE) || instr__filter.triggers);
        if (__atomic_load_n(&instr__filter.switched, __ATOMIC_RELAXED))
            instr__hooks_join(table);
        if (n == SWITCH_MODULES)
            instr__say("more than 1024 switchable modules", "", "", "; later ones keep their state at load");
        __atomic_store_n(&ntables, n + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
}

/* A module unloaded since it bound (dlclose) has no table any more:
 * dladdr no longer finds an object at its address, and it is forgotten
 * (its entry cleared: entries never move, for the handler). */
static void switch_all(int on)
{
    pthread_mutex_lock(&lock);
    if (state < 0)
        read_start();
    int was = __atomic_load_n(&state, __ATOMIC_RELAXED);
    __atomic_store_n(&state, on, __ATOMIC_RELEASE);
    if (was != on)
        follow(on);
    unsigned n = __atomic_load_n(&ntables, __ATOMIC_RELAXED);
    for (unsigned i = 0; i < n && i < SWITCH_MODULES; i++) {
        Dl_info info;
        if (tables[i] && (!dladdr((void *)tables[i], &info) || !info.dli_fname))
            __atomic_store_n(&tables[i], NULL, __ATOMIC_RELAXED);
    }
    write_words(0);
    pthread_mutex_unlock(&lock);
}

/* The dump says when the switch changed (EXT SWITCH, on the switching
 * thread), so the report can say which windows were recorded. */
static void switch_to(int on)
{
    int was = __atomic_load_n(&state, __ATOMIC_RELAXED);
    switch_all(on);
    if (was != on)
        instr__api_switched(on);
}

void instr__api_start(void)
{
    switch_to(1);
}

void instr__api_stop(void)
{
    switch_to(0);
}

/* Without the lock: the dump's creation asks it, in a fork child too
 * (where another thread of the parent may have held the lock). */
int instr__switch_off(void)
{
    int s = __atomic_load_n(&state, __ATOMIC_RELAXED);
    if (s < 0) {
        const char *e = secure_getenv("INSTR_START");
        return e && !strcmp(e, "off");
    }
    return s == 0;
}
