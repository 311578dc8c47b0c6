/* rt-api-test.c - unit test of the event/counter API (runtime/api.c):
 * bind the runtime in a forked child, call the EVENT and COUNTER slots as
 * the trampolines of include/instr/instr.h do, then read the dump back with
 * the tools' reader and compare the exact events and labels.
 *   rt-api-test DIR
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dump-reader.h"
#include "hook-abi.h"
#include "internal.h"
#include "test-util.h"


static instr_hook_fn hooks[INSTR_SLOT_COUNT];
typedef void (*event_fn)(const char *);
typedef void (*counter_fn)(const char *, int32_t);
#define EVENT(l) ((event_fn)(void (*)(void))hooks[INSTR_SLOT_EVENT])(l)
#define COUNTER(l, v) ((counter_fn)(void (*)(void))hooks[INSTR_SLOT_COUNTER])(l, v)

static struct {
    uint32_t id;
    uint8_t abi, flags;
    uint16_t reserved;
    char names[24];
} __attribute__((aligned(8))) f = {0, INSTR_HOOK_ABI_VERSION, 0, 0, "f\0api.c\0" "3"};

static void *other_thread(void *arg)
{
    (void)arg;
    EVENT("Frame Start");
    COUNTER("depth", 7);
    return NULL;
}

static int child(void)
{
    if (instr__bind(hooks, INSTR_SLOT_COUNT, INSTR_HOOK_ABI_VERSION))
        return 2;
    static char copy[] = "Frame Start"; /* same text, another address: one label */
    EVENT("Frame Start");
    COUNTER("depth", -5);
    EVENT(copy);
    hooks[INSTR_SLOT_ENTER]((struct instr_fn_desc *)&f, (void *)0x1000);
    for (int i = 0; i < 1000; i++) /* the lock-free path: no new label record */
        COUNTER("depth", i);
    EVENT(NULL); /* ignored */
    hooks[INSTR_SLOT_EXIT]((struct instr_fn_desc *)&f, (void *)0x1000);
    pthread_t t;
    if (pthread_create(&t, NULL, other_thread, NULL) || pthread_join(t, NULL))
        return 3;
    return 0;
}

/* The events of thread index th as text: "mark Frame Start|counter depth=-5|enter f|exit". */
static char *events(const struct instr_dump *d, uint32_t th, size_t max)
{
    char *s = calloc(1, max);
    size_t n = 0;
    for (size_t i = 0; i < d->nthreads; i++) {
        if (d->threads[i].index != th)
            continue;
        struct instr_event_iter it;
        struct instr_event ev;
        instr_event_iter_init(&it, &d->threads[i]);
        int counters = 0;
        while (instr_event_iter_next(&it, &ev) == 1 && n + 100 < max) {
            const struct instr_label *l = instr_dump_label(d, ev.arg);
            if (ev.kind == INSTR_EV_EXT && ev.ext == INSTR_EXT_COUNTER && ++counters > 2 && counters < 1002)
                continue; /* the loop: checked by count below */
            if (ev.kind == INSTR_EV_ENTER)
                n += (size_t)snprintf(s + n, max - n, "%senter %s", n ? "|" : "",
                                      instr_dump_function(d, ev.arg)->name);
            else if (ev.kind == INSTR_EV_EXIT)
                n += (size_t)snprintf(s + n, max - n, "%sexit", n ? "|" : "");
            else if (ev.kind == INSTR_EV_EXT && ev.ext == INSTR_EXT_MARK)
                n += (size_t)snprintf(s + n, max - n, "%smark %s", n ? "|" : "", l ? l->text : "?");
            else if (ev.kind == INSTR_EV_EXT && ev.ext == INSTR_EXT_COUNTER)
                n += (size_t)snprintf(s + n, max - n, "%scounter %s=%lld", n ? "|" : "", l ? l->text : "?",
                                      (long long)ev.value);
            else if (ev.kind == INSTR_EV_EXT && ev.ext == INSTR_EXT_THREAD_END)
                n += (size_t)snprintf(s + n, max - n, "%send", n ? "|" : "");
        }
        if (counters != 0 && counters != 1001 && counters != 1)
            n += (size_t)snprintf(s + n, max - n, "|%d counters", counters);
    }
    return s;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    char out[1024], path[1100];
    snprintf(out, sizeof out, "%s/api.%%p.instr", argv[1]);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("INSTR_OUTPUT", out, 1);
        setenv("INSTR_DETECTOR", "none", 1);
        exit(child());
    }
    int st;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    snprintf(path, sizeof path, "%s/api.%d.instr", argv[1], (int)pid);
    struct instr_dump d;
    char err[600];
    CHECK(instr_dump_open(&d, path, err, sizeof err) == 0);
    CHECK(d.nlabels == 2); /* "Frame Start" and "depth", whatever the calls and addresses */
    char *t0 = events(&d, 0, 4096), *t1 = events(&d, 1, 4096);
    const char *want0 = "mark Frame Start|counter depth=-5|mark Frame Start|enter f|counter depth=0|exit";
    const char *want1 = "mark Frame Start|counter depth=7";
    int ok = !strcmp(t0, want0) && !strncmp(t1, want1, strlen(want1));
    if (!ok)
        fprintf(stderr, "thread 0: %s\n  want: %s\nthread 1: %s\n  want: %s...\n", t0, want0, t1, want1);
    free(t0);
    free(t1);
    instr_dump_close(&d);
    if (ok)
        unlink(path);
    return ok ? 0 : 1;
}
