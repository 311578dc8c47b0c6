/* output-name.h - the dump name pattern of INSTR_OUTPUT and instr-sample -o,
 * one definition for the runtime and the tools: %p the pid, %e the
 * executable's base name, %r the rank in its job, %h the host name, %j the
 * job's id (runtime/job.c; %r and %j are "none" when the process was not
 * launched as one of a job's ranks), %% a percent sign; any other character
 * (an unknown %x included) stands for itself. */
#ifndef INSTR_OUTPUT_NAME_H
#define INSTR_OUTPUT_NAME_H

#include <stdio.h>
#include <string.h>

/* Who the process is in its job: rank -1, host and job "" when unknown. */
struct instr_output_job {
    long rank;
    const char *host, *job;
};

/* tmpl expanded into out (size bytes, NUL-terminated): 0, or -1 if it does
 * not fit.  j may be NULL (no job). */
static inline int instr_output_expand_job(const char *tmpl, long pid, const char *exe_base,
                                          const struct instr_output_job *j, char *out, size_t size)
{
    size_t n = 0;
    char num[24], one[2] = {0, 0};
    for (const char *s = tmpl; *s; s++) {
        const char *ins = one;
        one[0] = *s;
        if (*s == '%' && s[1] == 'p') {
            snprintf(num, sizeof num, "%ld", pid);
            ins = num, s++;
        } else if (*s == '%' && s[1] == 'e') {
            ins = exe_base, s++;
        } else if (*s == '%' && s[1] == 'r') {
            if (j && j->rank >= 0)
                snprintf(num, sizeof num, "%ld", j->rank);
            else
                strcpy(num, "none");
            ins = num, s++;
        } else if (*s == '%' && s[1] == 'h') {
            ins = j && j->host && j->host[0] ? j->host : "none", s++;
        } else if (*s == '%' && s[1] == 'j') {
            ins = j && j->job && j->job[0] ? j->job : "none", s++;
        } else if (*s == '%' && s[1] == '%') {
            ins = "%", s++;
        }
        size_t l = strlen(ins);
        if (n + l + 1 > size)
            return -1;
        memcpy(out + n, ins, l);
        n += l;
    }
    out[n] = 0;
    return 0;
}

static inline int instr_output_expand(const char *tmpl, long pid, const char *exe_base, char *out, size_t size)
{
    return instr_output_expand_job(tmpl, pid, exe_base, NULL, out, size);
}

#endif
