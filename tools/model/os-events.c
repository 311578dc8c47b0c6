/* os-events.c - the --os-events selection (os-events.h). */
#include "os-events.h"

#include <stdio.h>
#include <string.h>

const struct instr_os_kind instr_os_kinds[INSTR_OS_NKINDS] = {
#define INSTR_X_KIND(name, value, text) {value, text},
    INSTR_OS_KINDS(INSTR_X_KIND)
#undef INSTR_X_KIND
};

int instr_os_events_parse(const char *arg, unsigned *ignored, char *err, size_t errlen)
{
    unsigned chosen = 0;
    const char *p = arg;
    for (;;) {
        size_t n = strcspn(p, ",");
        int k = -1;
        if (n == 3 && !strncmp(p, "all", 3)) {
            chosen |= INSTR_OS_ALL_KINDS;
            k = 0;
        } else if (n == 4 && !strncmp(p, "none", 4)) {
            k = 0;
        }
        for (int i = 0; k < 0 && i < INSTR_OS_NKINDS; i++)
            if (strlen(instr_os_kinds[i].name) == n && !strncmp(p, instr_os_kinds[i].name, n)) {
                chosen |= instr_os_kinds[i].bit;
                k = i;
            }
        if (k < 0) {
            snprintf(err, errlen, "unknown kind '%.*s' (one of: sched, syscall, fault, signal, irq, unknown, all, "
                                  "none)", (int)n, p);
            return -1;
        }
        if (!p[n])
            break;
        p += n + 1;
    }
    *ignored = INSTR_OS_ALL_KINDS & ~chosen;
    return 0;
}

const char *instr_os_events_text(unsigned ignored, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < INSTR_OS_NKINDS; i++)
        if (!(ignored & instr_os_kinds[i].bit) && used < len)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "", instr_os_kinds[i].name);
    if (!used)
        snprintf(buf, len, "none");
    return buf;
}
