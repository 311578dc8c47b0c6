/* instr-sample - runs a program and samples every thread of it at a rate of
 * its CPU time, with the kernel's per-task CPU-clock sampling.
 *
 *   instr-sample [--rate HZ] [-o DUMP] [--stack-size BYTES] [--fp-chain] [--] PROGRAM [ARGS...]
 *
 * How: fork; the child waits on a pipe; the events are opened on it (one
 * per CPU, inherited by its threads and forked children, enabled at its
 * exec); then it execs PROGRAM.  The program holds no descriptor, no
 * signal handler, no mapping of ours: the kernel writes each sample (IP,
 * user registers, a copy of the top of the user stack, with --fp-chain the
 * frame-pointer call chain) into rings only instr-sample maps, and instr-sample drains
 * them, unwinds each stack with DWARF CFI (sample-unwind.c) and writes one
 * dump per process image (after exec, a new dump), like the instrumented
 * runtime (sample-records.c, sample-dumps.c).  This file is the command:
 * its options, the child, the signals, the drain loop and the messages.
 *
 * Exit codes: the program's exit status (128 + N if a signal N ended it);
 * 124 perf events are not allowed here (or would be taken off PROGRAM at
 * its exec: set-user-ID, unreadable); 125 instr-sample failed (usage,
 * setup); 126 PROGRAM cannot be run; 127 PROGRAM not found.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dump-reader.h"
#include "sample-secure-exec.h"
#include "sample-perf.h"
#include "sample-session.h"

#ifndef INSTR_VERSION
#define INSTR_VERSION "unknown"
#endif
#define PROG "instr-sample"

enum { EXIT_NOT_ALLOWED = 124, EXIT_FAILED = 125, EXIT_NOEXEC = 126, EXIT_NOTFOUND = 127 };

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(PROG ": ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* The session's messages (sample-session.h). */
static void say_msg(void *ctx, const char *msg)
{
    (void)ctx;
    say("%s", msg);
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static volatile sig_atomic_t forward_sig;
static pid_t child_pid; /* the program's first process, for on_term */

static void on_term(int sig)
{
    forward_sig = sig;
    if (child_pid > 0)
        kill(child_pid, sig);
}

static void usage(FILE *f)
{
    fputs("usage: instr-sample [--rate HZ] [-o DUMP] [--stack-size BYTES] [--fp-chain] [--] PROGRAM [ARGS...]\n"
          "Runs PROGRAM and samples every thread of it (and of the processes it forks\n"
          "and execs) at HZ per second of its CPU time, user code only; writes one dump\n"
          "per process, PROGRAM.<pid>.instr, for instr-report.\n"
          "\n"
          "  --rate HZ           samples per CPU second of each thread (default 1000)\n"
          "  -o, --output DUMP   dump path: %p pid, %e executable name, %% a percent sign\n"
          "                      (default: INSTR_OUTPUT, else %e.%p.instr)\n"
          "  --stack-size BYTES  user stack copied per sample for unwinding (default 8192)\n"
          "  --fp-chain          also the kernel's frame-pointer chain, for stacks through\n"
          "                      code without unwind tables (JIT, some assembly, Go)\n"
          "  --help, --version\n"
          "\n"
          "Exit codes: PROGRAM's own (128+N if signal N ended it); 124 perf events are not\n"
          "allowed here; 125 instr-sample failed; 126 PROGRAM cannot run; 127 not found.\n",
          f);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"rate", required_argument, 0, 'r'},
                                         {"output", required_argument, 0, 'o'},
                                         {"stack-size", required_argument, 0, 's'},
                                         {"fp-chain", no_argument, 0, 'f'},
                                         {"help", no_argument, 0, 'h'},
                                         {"version", no_argument, 0, 'V'},
                                         {0, 0, 0, 0}};
    static struct instr_ssession g = {.say = say_msg};
    g.rate_hz = 1000;
    g.stack_bytes = 8192;
    g.out_template = getenv("INSTR_OUTPUT");
    if (g.out_template && !*g.out_template)
        g.out_template = NULL;
    argv[0] = (char *)PROG; /* getopt's messages start with it */
    int c;
    while ((c = getopt_long(argc, argv, "+o:h", opts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'r':
            g.rate_hz = strtoull(optarg, &end, 10);
            if (*end || !*optarg || g.rate_hz < 1 || g.rate_hz > 100000) {
                say("--rate takes 1..100000 (Hz), not '%s'", optarg);
                return EXIT_FAILED;
            }
            break;
        case 's':
            g.stack_bytes = strtoull(optarg, &end, 10);
            if (*end || !*optarg || g.stack_bytes < 64 || g.stack_bytes > 65000) {
                say("--stack-size takes 64..65000 (bytes), not '%s'", optarg);
                return EXIT_FAILED;
            }
            g.stack_bytes &= ~(uint64_t)7;
            break;
        case 'o':
            g.out_template = optarg;
            break;
        case 'f':
            g.fp_chain = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            printf(PROG " (instr) %s\n", INSTR_VERSION);
            return 0;
        default: /* getopt said why */
            say("try '" PROG " --help' for more information");
            return EXIT_FAILED;
        }
    }
    if (optind >= argc) {
        say("no PROGRAM to run; try '" PROG " --help'");
        return EXIT_FAILED;
    }
    g.period_ns = 1000000000u / g.rate_hz;
    /* A program the kernel would take the events off at its exec ran
     * unsampled and left an empty dump without a word: refused instead. */
    char why[1024];
    if (instr_ss_secure_exec(argv[optind], why, sizeof why)) {
        say("%s", why);
        return EXIT_NOT_ALLOWED;
    }

    /* Nothing to sample with (qemu-user, a kernel without perf events):
     * said before PROGRAM is started. */
    if (instr_sampler_present(why, sizeof why) < 0) {
        say("%s", why);
        return EXIT_NOT_ALLOWED;
    }

    int go[2], report[2];
    if (pipe2(go, O_CLOEXEC) || pipe2(report, O_CLOEXEC)) {
        say("pipe: %s", strerror(errno));
        return EXIT_FAILED;
    }
    pid_t child = fork();
    if (child < 0) {
        say("fork: %s", strerror(errno));
        return EXIT_FAILED;
    }
    if (child == 0) {
        char b;
        close(go[1]);
        close(report[0]);
        /* Wait until the events are on us (or instr-sample gave up). */
        if (read(go[0], &b, 1) != 1)
            _exit(EXIT_FAILED);
        execvp(argv[optind], argv + optind);
        int e = errno;
        if (write(report[1], &e, sizeof e) < 0)
            _exit(EXIT_FAILED);
        _exit(e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
    }
    g.child = child_pid = child;
    close(go[0]);
    close(report[1]);
    char outname[4096];
    if (instr_ss_output_writable(&g, child, argv[optind], outname, sizeof outname) < 0) {
        int e = errno;
        close(go[1]); /* the child reads EOF and leaves without running PROGRAM */
        waitpid(child, NULL, 0);
        say("cannot create %s: %s", outname, strerror(e));
        return EXIT_FAILED;
    }

    struct instr_sampler *smp = NULL;
    char err[512];
    struct instr_sampler_config cfg = {
        .pid = child, .period_ns = g.period_ns, .stack_bytes = g.stack_bytes, .fp_chain = g.fp_chain};
    int rc = instr_sampler_open(&smp, &cfg, err, sizeof err);
    if (rc < 0) {
        /* The child is told nothing: it reads EOF and leaves without running PROGRAM. */
        close(go[1]);
        waitpid(child, NULL, 0);
        if (rc == INSTR_SAMPLER_NOT_ALLOWED) {
            say("%s", err);
            return EXIT_NOT_ALLOWED;
        }
        say("%s", err);
        return EXIT_FAILED;
    }
    struct instr_sproc *top = instr_ss_proc(&g, (uint32_t)child, 1);
    if (!top) {
        say("out of memory");
        return EXIT_FAILED;
    }
    top->ppid = (uint32_t)getpid();
    signal(SIGINT, SIG_IGN); /* the terminal's ^C reaches the program; we finish its dumps */
    signal(SIGQUIT, SIG_IGN);
    struct sigaction sa = {0};
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    if (write(go[1], "g", 1) != 1) {
        say("cannot start %s", argv[optind]);
        return EXIT_FAILED;
    }
    close(go[1]);
    int e;
    if (read(report[0], &e, sizeof e) == (ssize_t)sizeof e) {
        say("%s: %s", argv[optind], strerror(e));
        waitpid(child, NULL, 0);
        instr_sampler_close(smp);
        return e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC;
    }
    close(report[0]);
    /* The program now runs: the image that counts starts at its exec. */
    top->start_ns = instr_ss_now();
    instr_ss_read_exe(top);

    int status = 0, done = 0;
    while (!done) {
        instr_sampler_wait(smp, 50);
        instr_sampler_drain(smp, instr_ss_record, &g);
        g.round++;
        instr_ss_finish_ended(&g);
        pid_t w = waitpid(child, &status, WNOHANG);
        if (w == child)
            done = 1;
    }
    instr_sampler_drain(smp, instr_ss_record, &g);
    uint64_t end = instr_ss_now();
    /* The first task's own CPU time: the events' totals minus what its
     * inherited tasks reported when they exited. */
    uint64_t total = instr_sampler_total(smp);
    struct instr_sthread *mt = instr_ss_thread(top, top->pid, top->w != NULL);
    if (mt && total > g.read_total)
        mt->cpu_ns += total - g.read_total;
    top->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    top->have_status = 1;
    if (!top->w)
        instr_ss_open_dump(&g, top); /* the program always gets a dump, even without samples */
    /* Like perf record, sampling ends with the program's first process: a
     * daemon it left behind may run for ever.  Its dump says that its
     * samples stop here, and so does one line. */
    for (struct instr_sproc *p = g.procs; p; p = p->next) {
        if (p->closed || p->ended || p == top || kill((pid_t)p->pid, 0) < 0)
            continue;
        if (!p->w)
            instr_ss_open_dump(&g, p);
        if (p->w) {
            instr_writer_header(p->w)->flags |= INSTR_DUMP_SAMPLING_CUT;
            say("process %u (%s) still runs: its sampling stopped when %s ended (its dump says so)", p->pid,
                base_name(p->exe), base_name(argv[optind]));
        }
        instr_ss_close_dump(&g, p, end, 0);
        p->closed = 1;
    }
    for (struct instr_sproc *p = g.procs; p; p = p->next)
        instr_ss_close_dump(&g, p, p->ended && p->end_ns ? p->end_ns : end, 1);
    instr_sampler_close(smp);
    if (g.lost)
        say("%" PRIu64 " samples lost (the kernel's ring was full); the report counts them", g.lost);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
