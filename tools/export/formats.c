/* formats.c - the table of output formats and exports (formats.h). */
#include "formats.h"

#include <string.h>

#define REPORT INSTR_FORMAT_REPORT
#define EXPORT INSTR_FORMAT_EXPORT

const struct instr_format instr_formats[] = {
    /* name, help, kind, report options read, writer, --diff writer, writer during the walk, own options,
     * not for a terminal, the export of count-mode dumps */
    {"text", "text (default)", REPORT, INSTR_USES_VIEW | INSTR_USES_UNITS, instr_report_text, instr_diff_text, NULL, NULL, 0, NULL},
    {"csv", "csv", REPORT, INSTR_USES_VIEW | INSTR_USES_UNITS, instr_report_csv, instr_diff_csv, NULL, NULL, 0, NULL},
    {"json", "json (json has every view)", REPORT, INSTR_USES_VIEW | INSTR_USES_UNITS, instr_report_json, instr_diff_json, NULL, NULL, 0, NULL},
    {"visualiser", "visualiser", EXPORT, 0, instr_export_visualiser, NULL, instr_export_visualiser_walk, NULL, 0, NULL},
    {"chrome", "chrome (trace event JSON)", EXPORT, 0, instr_export_chrome, NULL, instr_export_chrome_walk,
     &instr_chrome_options, 0, NULL},
    {"callgrind", "callgrind", EXPORT, 0, instr_export_callgrind, NULL, NULL, NULL, 0, instr_export_callgrind_counts},
    {"folded", "folded", EXPORT, INSTR_USES_TICKS, instr_export_folded, NULL, NULL, &instr_folded_options, 0,
     instr_export_folded_counts},
    {"pprof", "pprof (gzip'd profile.proto)", EXPORT, 0, instr_export_pprof, NULL, NULL, NULL, 1,
     instr_export_pprof_counts},
    {"html", "html (timeline viewer page)", EXPORT, 0, instr_export_html, NULL, NULL, &instr_html_options, 1, NULL},
    {"perfetto", "perfetto (protobuf trace, for large runs)", EXPORT, 0, instr_export_perfetto, NULL,
     instr_export_perfetto_walk, &instr_perfetto_options, 1, NULL},
};
const size_t instr_nformats = sizeof instr_formats / sizeof instr_formats[0];

const struct instr_format *instr_format_find(enum instr_format_kind kind, const char *name)
{
    for (size_t i = 0; i < instr_nformats; i++)
        if (instr_formats[i].kind == kind && !strcmp(instr_formats[i].name, name))
            return &instr_formats[i];
    return NULL;
}

const char *instr_format_names(enum instr_format_kind kind, const char *sep)
{
    static char buf[2][512];
    char *b = buf[kind == EXPORT];
    size_t n = 0;
    b[0] = 0;
    for (size_t i = 0; i < instr_nformats && n < sizeof buf[0]; i++)
        if (instr_formats[i].kind == kind)
            n += (size_t)snprintf(b + n, sizeof buf[0] - n, "%s%s", n ? sep : "", instr_formats[i].name);
    return b;
}
