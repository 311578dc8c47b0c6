/* log.c - the runtime's few words to the user ("not recording", "stopped
 * recording to ...", a detector that cannot run), one line each.
 *
 * Library code never prints; this is the one place the runtime writes to a
 * descriptor.  Where (INSTR_LOG):
 *   stderr   descriptor 2;
 *   none     nowhere;
 *   a path   appended to that file (opened and closed per line: the runtime
 *            holds no descriptor of the program's);
 *   unset    stderr if it is a terminal, else nowhere.  A redirected stderr
 *            is the program's data (2>data.txt, a pipe into another
 *            program): a line of ours there would change what the program
 *            produces.  What the lines say is also in the dump (dropped
 *            events, the detector detail), so the report still tells.
 * Writing never raises SIGPIPE (a program whose stderr is a closed pipe runs
 * as it would uninstrumented): SIGPIPE is blocked around the write, and one
 * the write made pending is taken back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

enum { LOG_UNSET, LOG_NONE, LOG_STDERR, LOG_PATH };

static int log_to;           /* LOG_*, decided at the first line */
static char log_path[4096];

static void decide(void)
{
    const char *e = secure_getenv("INSTR_LOG");
    if (!e || !*e)
        log_to = isatty(2) ? LOG_STDERR : LOG_NONE;
    else if (!strcmp(e, "none"))
        log_to = LOG_NONE;
    else if (!strcmp(e, "stderr"))
        log_to = LOG_STDERR;
    else if (strlen(e) < sizeof log_path) {
        memcpy(log_path, e, strlen(e) + 1);
        log_to = LOG_PATH;
    } else {
        log_to = LOG_NONE;
    }
}

/* write() with SIGPIPE blocked on this thread; a SIGPIPE the write raised
 * (and only that one: not one already pending) is consumed. */
static void write_nosigpipe(int fd, const char *buf, size_t n)
{
    sigset_t pipe, old, pending;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, &old);
    sigpending(&pending);
    int was_pending = sigismember(&pending, SIGPIPE);
    ssize_t w = write(fd, buf, n);
    if (w < 0 && errno == EPIPE && !was_pending) {
        struct timespec zero = {0, 0};
        sigtimedwait(&pipe, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Lines said before the dump's header exists (the settings are read
 * first), copied into it when it does (instr__notes_to_header). */
static char early[512];
static uint32_t early_len, early_dropped;

/* Appends line (n bytes, '\n' included) to the notes of size cap at
 * buf, *len bytes used: whole lines only, a line that does not fit
 * counted in *dropped.  Threads may say at once: the space is taken with
 * one atomic add. */
static void note(char *buf, uint32_t cap, uint32_t *len, uint32_t *dropped, const char *line, uint32_t n)
{
    uint32_t at = __atomic_fetch_add(len, n, __ATOMIC_RELAXED);
    if (at >= cap || n > cap - at) {
        __atomic_fetch_sub(len, n, __ATOMIC_RELAXED); /* the space back, unless another took it since */
        __atomic_fetch_add(dropped, 1, __ATOMIC_RELAXED);
        return;
    }
    memcpy(buf + at, line, n);
}

void instr__notes_to_header(struct instr_dump_header *h)
{
    uint32_t n = early_len < sizeof h->notes ? early_len : (uint32_t)sizeof h->notes;
    memcpy(h->notes, early, n);
    h->notes_len = n;
    h->notes_dropped = early_dropped;
}

void instr__say(const char *a, const char *b, const char *c, const char *d)
{
    char buf[1024];
    int saved = errno;
    /* Into the dump first, whatever INSTR_LOG says: the report says it. */
    int k = snprintf(buf, sizeof buf, "%s%s%s%s\n", a, b, c, d);
    if (k > 0) {
        uint32_t n = k > (int)sizeof buf - 1 ? (uint32_t)sizeof buf - 1 : (uint32_t)k;
        buf[n - 1] = '\n';
        struct instr_dump_header *h = instr__rt.header;
        if (h)
            note(h->notes, sizeof h->notes, &h->notes_len, &h->notes_dropped, buf, n);
        else
            note(early, sizeof early, &early_len, &early_dropped, buf, n);
    }
    if (log_to == LOG_UNSET)
        decide();
    if (log_to == LOG_NONE)
        goto out;
    int n = snprintf(buf, sizeof buf, "instr: %s%s%s%s\n", a, b, c, d);
    if (n > (int)sizeof buf - 1)
        n = (int)sizeof buf - 1;
    if (n <= 0)
        goto out;
    if (log_to == LOG_STDERR) {
        write_nosigpipe(2, buf, (size_t)n);
    } else {
        int fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
        if (fd >= 0) {
            write_nosigpipe(fd, buf, (size_t)n);
            close(fd);
        }
    }
out:
    errno = saved;
}
