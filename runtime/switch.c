/* switch.c - instr_start / instr_stop and INSTR_START=off: the run-time
 * switch of modules compiled with -fplugin-arg-instr-switchable.
 *
 * Such a module's functions test one word at their entry, slot
 * INSTR_SLOT_ON of the module's hook table, and run their hooked copy
 * when it is nonzero, their plain body when it is zero
 * (plugin/pass-switch.cc).  Every bound table is remembered here, so a
 * switch writes the word of each.  A relaxed store: a thread sees the new
 * value at some next function entry, which is all the switch promises
 * (a hooked copy already running finishes hooked, closing its frames).
 * Modules compiled without switchable have the slot too and never read
 * it: their hooks always record. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* More modules than this: the later ones keep the state they were bound
 * in (said once in the log). */
#define SWITCH_MODULES 1024

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static instr_hook_fn *tables[SWITCH_MODULES];
static unsigned ntables;
static int state = -1; /* 1 on, 0 off; -1: INSTR_START not read yet */

static void set_slot(instr_hook_fn *table, int on)
{
    __atomic_store_n(&table[INSTR_SLOT_ON], (instr_hook_fn)(uintptr_t)on, __ATOMIC_RELAXED);
}

/* INSTR_START: "off" begins stopped; unset, empty or "on" begins started. */
static void read_start(void)
{
    const char *e = secure_getenv("INSTR_START");
    state = 1;
    if (e && !strcmp(e, "off"))
        state = 0;
    else if (e && *e && strcmp(e, "on"))
        instr__say("INSTR_START=", e, " is neither on nor off", "; starting on");
}

void instr__switch_bind(instr_hook_fn *table, int recording)
{
    pthread_mutex_lock(&lock);
    if (state < 0)
        read_start();
    /* Not recording: the hooks are no-ops, the plain bodies are cheaper. */
    set_slot(table, recording && state);
    if (!recording) {
        pthread_mutex_unlock(&lock);
        return;
    }
    if (ntables < SWITCH_MODULES)
        tables[ntables++] = table;
    else if (ntables++ == SWITCH_MODULES)
        instr__say("more than 1024 switchable modules", "", "", "; later ones keep their state at load");
    pthread_mutex_unlock(&lock);
}

/* A module unloaded since it bound (dlclose) has no table any more:
 * dladdr no longer finds an object at its address, and it is forgotten. */
static void switch_all(int on)
{
    pthread_mutex_lock(&lock);
    if (state < 0)
        read_start();
    state = on;
    unsigned n = ntables < SWITCH_MODULES ? ntables : SWITCH_MODULES, kept = 0;
    for (unsigned i = 0; i < n; i++) {
        Dl_info info;
        if (!dladdr((void *)tables[i], &info) || !info.dli_fname)
            continue;
        set_slot(tables[i], on);
        tables[kept++] = tables[i];
    }
    if (ntables <= SWITCH_MODULES)
        ntables = kept;
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
