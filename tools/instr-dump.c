/* instr-dump - prints a dump in its text form, or builds a dump from text.
 *
 *   instr-dump DUMP                          text form on stdout
 *   instr-dump --from-text TRACE.txt -o OUT  binary dump from the text form
 *
 * Exit codes: 0 ok, 1 usage, 2 input unusable, 3 printed with warnings.
 */
#include <stdio.h>
#include <string.h>

#include "dump-reader.h"
#include "text-trace.h"

static void usage(FILE *f)
{
    fputs("usage: instr-dump DUMP\n"
          "       instr-dump --from-text TRACE.txt -o OUT.instr\n"
          "Prints a dump in its text form (tools/README-text-format.md), or builds a\n"
          "binary dump from that text form ('-' reads standard input).\n"
          "Exit codes: 0 ok, 1 usage, 2 input unusable, 3 printed with warnings.\n",
          f);
}

int main(int argc, char **argv)
{
    const char *from = NULL, *out = NULL, *dump = NULL;
    char err[512];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--from-text") && i + 1 < argc) {
            from = argv[++i];
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "instr-dump: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 1;
        } else if (!dump) {
            dump = argv[i];
        } else {
            usage(stderr);
            return 1;
        }
    }
    if (from) {
        if (!out || dump) {
            usage(stderr);
            return 1;
        }
        FILE *in = strcmp(from, "-") ? fopen(from, "r") : stdin;
        if (!in) {
            perror(from);
            return 2;
        }
        int rc = instr_text_to_dump(in, from, out, err, sizeof err);
        if (in != stdin)
            fclose(in);
        if (rc < 0) {
            fprintf(stderr, "instr-dump: %s\n", err);
            remove(out);
            return 2;
        }
        return 0;
    }
    if (!dump || out) {
        usage(stderr);
        return 1;
    }
    struct instr_dump d;
    if (instr_dump_open(&d, dump, err, sizeof err) < 0) {
        fprintf(stderr, "instr-dump: %s\n", err);
        return 2;
    }
    size_t nbad = 0;
    int rc = instr_text_write(stdout, &d, &nbad, err, sizeof err);
    int warned = d.nwarnings || nbad;
    for (size_t i = 0; i < d.nwarnings; i++)
        fprintf(stderr, "instr-dump: warning: %s\n", d.warnings[i]);
    instr_dump_close(&d);
    if (fflush(stdout) != 0 || rc < 0) {
        fprintf(stderr, "instr-dump: %s\n", rc < 0 ? err : "write error");
        return 2;
    }
    return warned ? 3 : 0;
}
