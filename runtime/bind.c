/* bind.c - instr__bind, the runtime's one exported symbol, and the lazy
 * process initialisation that the first bind triggers.
 *
 * Every instrumented module (the executable, each instrumented .so) calls
 * instr__bind from a constructor; the first call creates the dump, chooses
 * the detector and hooks exit and fork.  If the dump cannot be created the
 * tables get a no-op and the program runs as if uninstrumented.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "detector.h"
#include "internal.h"

struct instr__process instr__rt = {
    .fd = -1,
    .dir_fd = -1,
    .stopped = 1,
    .chunk_lock = PTHREAD_MUTEX_INITIALIZER,
    .meta_lock = PTHREAD_MUTEX_INITIALIZER,
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int recording;

/* The output template, made absolute now: a later chdir must not move the
 * dump (nor the fork child's).  A job's rank (job.c) writes by default
 * into a directory of that job's own: 1,000 ranks, 1,000 names in one
 * place, apart from every other job's. */
static void output_template(void)
{
    const char *t = secure_getenv("INSTR_OUTPUT");
    char cwd[2048];
    if ((!t || !*t) && instr__job.rank >= 0)
        t = "%e.%j.instr.d/rank%r.%p.instr";
    else if (!t || !*t)
        t = "%e.%p.instr";
    if (t[0] == '/' || !getcwd(cwd, sizeof cwd)) {
        strncpy(instr__rt.output_template, t, sizeof instr__rt.output_template - 1);
        return;
    }
    size_t cl = strlen(cwd), tl = strlen(t);
    if (cl + 1 + tl + 1 > sizeof instr__rt.output_template) {
        strncpy(instr__rt.output_template, t, sizeof instr__rt.output_template - 1);
        return;
    }
    memcpy(instr__rt.output_template, cwd, cl);
    instr__rt.output_template[cl] = '/';
    memcpy(instr__rt.output_template + cl + 1, t, tl + 1);
}

/* Never unloaded: threads' rseq_cs fields point at our descriptor, and
 * atexit/atfork handlers at our code. */
static void pin_self(void)
{
    Dl_info info;
    if (dladdr((void *)instr__process_init, &info) && info.dli_fname)
        dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

static void process_init(void)
{
    struct instr__thread *saved_tls = instr__tls;
    if (!saved_tls)
        instr__tls = &instr__idle_thread; /* no hooks on this thread meanwhile */
    ssize_t n = readlink("/proc/self/exe", instr__rt.exe_path, sizeof instr__rt.exe_path - 1);
    instr__rt.exe_path[n > 0 ? n : 0] = 0;
    instr__job_init();
    output_template();
    if (pthread_key_create(&instr__rt.key, instr__thread_end)) {
        instr__say("cannot create a thread key", "", "", "; not recording");
        goto out;
    }
    if (instr__meta_init()) {
        instr__say("cannot map the function registry", "", "", "; not recording");
        goto out;
    }
    if (!instr__dump_allowed())
        goto out; /* set-user-ID/set-group-ID: touch nothing */
    instr__detector_init();
    if (instr__dump_create(0) || instr__lifecycle_init()) {
        instr__detector_withdraw(); /* unrecorded, the program sees what it would without us */
        goto out;
    }
    pin_self();
    instr__preinit_say();
    recording = 1;
out:
    if (!saved_tls)
        instr__tls = NULL;
}

int instr__process_init(void)
{
    int saved = errno;
    pthread_once(&init_once, process_init);
    errno = saved;
    return recording ? 0 : -1;
}

/* A module whose binding waited for main (hook-abi.h, "Deferred
 * binding"): whatever ran before main, its constructors and theirs, is
 * not in the dump.  Said once, in the dump's header like every note. */
static void late_say(void)
{
    static int said;
    if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
        return;
    instr__say("recording began at main: the program defines its own malloc/free, so the runtime was loaded "
               "after its constructors",
               "", "", "; calls before main are not recorded");
}

__attribute__((visibility("default"))) int instr__bind(instr_hook_fn *table, unsigned slots,
                                                       unsigned abi)
{
    unsigned flags = abi & ~INSTR_BIND_ABI_MASK;
    if ((abi & INSTR_BIND_ABI_MASK) != INSTR_HOOK_ABI_VERSION || (flags & ~INSTR_BIND_LATE) || !table)
        return -1;
    int on = instr__process_init() == 0;
    if (on && (flags & INSTR_BIND_LATE))
        late_say();
    for (unsigned i = 0; i < slots; i++)
        table[i] = i == INSTR_SLOT_ON ? (instr_hook_fn)0 : instr__hook_nop;
    if (on && slots > INSTR_SLOT_RETURN) {
        table[INSTR_SLOT_ENTER] = instr__hook_enter;
        table[INSTR_SLOT_EXIT] = instr__hook_exit;
        table[INSTR_SLOT_LANDING] = instr__hook_landing;
        /* The table has one pointer type; the call-site slots are called
         * with their own signatures (hook-abi.h). */
        table[INSTR_SLOT_CALL] = (instr_hook_fn)(void (*)(void))instr__hook_call;
        table[INSTR_SLOT_RETURN] = (instr_hook_fn)(void (*)(void))instr__hook_return;
    }
    /* The public API (api.c); without recording it stays a no-op. */
    if (on && slots > INSTR_SLOT_COUNTER) {
        table[INSTR_SLOT_EVENT] = (instr_hook_fn)(void (*)(void))instr__api_event;
        table[INSTR_SLOT_COUNTER] = (instr_hook_fn)(void (*)(void))instr__api_counter;
    }
    if (on && slots > INSTR_SLOT_UNIT)
        table[INSTR_SLOT_UNIT] = (instr_hook_fn)(void (*)(void))instr__meta_unit;
    if (on && slots > INSTR_SLOT_COUNT_THREAD) /* count mode (count.c) */
        table[INSTR_SLOT_COUNT_THREAD] = (instr_hook_fn)(void (*)(void))instr__count_thread;
    if (on && slots > INSTR_SLOT_COUNT_ARM)
        table[INSTR_SLOT_COUNT_ARM] = (instr_hook_fn)(void (*)(void))instr__count_arm_entry;
    if (on && slots > INSTR_SLOT_STOP) {
        table[INSTR_SLOT_START] = (instr_hook_fn)(void (*)(void))instr__api_start;
        table[INSTR_SLOT_STOP] = (instr_hook_fn)(void (*)(void))instr__api_stop;
    }
    if (on && slots > INSTR_SLOT_ENDING) /* _exit and kin (lifecycle.c) */
        table[INSTR_SLOT_ENDING] = (instr_hook_fn)(void (*)(void))instr__hook_ending;
    if (slots > INSTR_SLOT_ON) /* switchable (switch.c) */
        instr__switch_bind(table, on);
    return 0;
}
