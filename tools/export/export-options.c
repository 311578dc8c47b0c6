/* export-options.c - the options shared by the timeline exports
 * (export-options.h). */
#include "export-options.h"

#include <stdlib.h>
#include <string.h>

int instr_opt_double(const char *v, double *out, double min)
{
    char *end;
    *out = strtod(v, &end);
    return *end || !*v || !(*out >= min) ? -1 : 0;
}

/* FROM:TO in ms (either may be empty) into µs; TO empty: -1. */
static int parse_range(void *opts, const char *v)
{
    struct instr_timeline_opts *t = opts;
    const char *colon = strchr(v, ':');
    char *end;
    if (!colon)
        return -1;
    t->chosen = 1;
    t->from_us = colon == v ? 0 : strtod(v, &end) * 1e3;
    if (colon != v && end != colon)
        return -1;
    t->to_us = colon[1] ? strtod(colon + 1, &end) * 1e3 : -1;
    return colon[1] && (*end || t->to_us < t->from_us) ? -1 : 0;
}

static int parse_min_duration(void *opts, const char *v)
{
    struct instr_timeline_opts *t = opts;
    t->chosen = 1;
    return instr_opt_double(v, &t->min_dur_us, 0);
}

const struct instr_option instr_opt_time_range = {
    "time-range", "FROM:TO",
    "only what overlaps FROM..TO ms since the\nsession's start (either may be empty)", parse_range, 0};
const struct instr_option instr_opt_min_duration = {
    "min-duration", "US",
    "leave out calls shorter than US microseconds\n(without it, --time-range or --split-size, chrome keeps\nonly the longest calls of a trace too big for browser\nviewers; 0 keeps every call)",
    parse_min_duration, 0};
