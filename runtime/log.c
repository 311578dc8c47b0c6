/* log.c - the runtime's few words to the user ("not recording", "stopped
 * recording to ...", a detector that cannot run), one line each.
 *
 * Library code never prints; this is the one place the runtime writes to a
 * descriptor the program owns.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "internal.h"

void instr__say(const char *a, const char *b, const char *c, const char *d)
{
    char buf[1024];
    int saved = errno;
    int n = snprintf(buf, sizeof buf, "instr: %s%s%s%s\n", a, b, c, d);
    if (n > (int)sizeof buf - 1)
        n = (int)sizeof buf - 1;
    if (n > 0 && write(2, buf, (size_t)n) < 0) {
        /* nothing more we can do */
    }
    errno = saved;
}
