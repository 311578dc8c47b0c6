/* rt-dlopen-test.c - the runtime as instrumented modules use it: dlopen
 * libinstr-rt.so by absolute path, look up instr__bind, bind a table, run
 * hooks on two threads, check the dump.  Also checks that nothing but
 * instr__bind is exported.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump-read.h"
#include "hook-abi.h"
#include "test-util.h"

static struct fake_desc f = FAKE_DESC("main", "m.c", "3", 0);
static struct fake_desc g = FAKE_DESC("work", "m.c", "9", 0);
static instr_hook_fn table[INSTR_SLOT_COUNT];

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
        return 1;                                                                                  \
    } while (0)

static void *worker(void *arg)
{
    (void)arg;
    table[INSTR_SLOT_ENTER]((struct instr_fn_desc *)&g, (void *)0x5000);
    table[INSTR_SLOT_EXIT]((struct instr_fn_desc *)&g, (void *)0x5000);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        FAIL("usage: rt-dlopen-test LIBINSTR-RT");
    char out[] = "/tmp/instr-rt-dlopen-XXXXXX";
    if (!mkdtemp(out))
        FAIL("mkdtemp");
    char tmpl[256], path[300];
    snprintf(tmpl, sizeof tmpl, "%s/d.instr", out);
    setenv("INSTR_OUTPUT", tmpl, 1);
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h)
        FAIL("dlopen: %s", dlerror());
    instr_bind_fn bind = (instr_bind_fn)dlsym(h, INSTR_BIND_SYMBOL);
    if (!bind)
        FAIL("no %s", INSTR_BIND_SYMBOL);
    if (dlsym(h, "instr__hook_enter") || dlsym(h, "instr__rt"))
        FAIL("internal symbols are exported");
    if (bind(table, INSTR_SLOT_COUNT, INSTR_HOOK_ABI_VERSION + 1) != -1)
        FAIL("a wrong ABI version was accepted");
    if (bind(table, INSTR_SLOT_COUNT, INSTR_HOOK_ABI_VERSION))
        FAIL("bind failed");
    /* a second module binds the same runtime: one dump; this one from
     * main (hook-abi.h, "Deferred binding"), which the header says */
    instr_hook_fn table2[INSTR_SLOT_COUNT];
    if (bind(table2, INSTR_SLOT_COUNT, INSTR_HOOK_ABI_VERSION | 0x200u) != -1)
        FAIL("an unknown bind flag was accepted");
    if (bind(table2, INSTR_SLOT_COUNT, INSTR_HOOK_ABI_VERSION | INSTR_BIND_LATE) || table2[0] != table[0])
        FAIL("second bind differs");
    errno = 77;
    table[INSTR_SLOT_ENTER]((struct instr_fn_desc *)&f, (void *)0x9000);
    pthread_t th;
    pthread_create(&th, NULL, worker, NULL);
    pthread_join(th, NULL);
    table[INSTR_SLOT_EXIT]((struct instr_fn_desc *)&f, (void *)0x9000);
    if (errno != 77)
        FAIL("errno changed");
    if (dlclose(h) == 0 && (h = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD)) == NULL)
        FAIL("the runtime was unloaded by dlclose");
    struct td_dump d;
    if (td_read(tmpl, &d))
        FAIL("%s: %s", tmpl, d.error);
    if (!memmem(d.h.notes, d.h.notes_len, "recording began at main", 23))
        FAIL("the late bind is not said in the header's notes: %.*s", (int)d.h.notes_len, d.h.notes);
    char *t0 = td_text(&d, 0), *t1 = td_text(&d, 1);
    int ok = !strcmp(t0, "enter main|exit") && !strcmp(t1, "enter work|exit|end") &&
             d.h.thread_count == 2;
    if (!ok)
        FAIL("events: [%s] [%s] threads %u", t0, t1, d.h.thread_count);
    free(t0);
    free(t1);
    td_free(&d);
    unlink(tmpl);
    rmdir(out);
    (void)path;
    fprintf(stderr, "dlopen: ok\n");
    return 0;
}
