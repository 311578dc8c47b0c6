/* instr-dump - prints a dump in its text form, or builds a dump from text.
 *
 *   instr-dump DUMP                          text form on stdout
 *   instr-dump --from-text TRACE.txt -o OUT  binary dump from the text form
 *                                            (-o -: on stdout)
 *
 * Exit codes: 0 ok, 1 usage, 2 input unusable, 3 printed with warnings.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump-reader.h"
#include "text-trace.h"

#ifndef INSTR_VERSION
#define INSTR_VERSION "unknown"
#endif

#define PROG "instr-dump"

static void usage(FILE *f)
{
    fputs("usage: instr-dump DUMP\n"
          "       instr-dump --from-text TRACE.txt -o OUT.instr\n"
          "Prints a dump in its text form (tools/README-text-format.md), or builds a\n"
          "binary dump from that text form ('-' reads standard input).\n"
          "\n"
          "  --from-text FILE    build a dump from the text form in FILE\n"
          "  -o, --output FILE   the dump --from-text writes ('-': standard output)\n"
          "  -h, --help          this text\n"
          "  --version           the version\n"
          "\n"
          "Exit codes: 0 ok, 1 usage, 2 input unusable, 3 printed with warnings.\n",
          f);
}

/* --from-text ... -o -: the writer seeks back to fill in the header, so
 * the dump is built in a temporary file, then copied to standard output. */
static int text_to_stdout(FILE *in, const char *from, char *err, size_t errlen)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/instr-dump.XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        snprintf(err, errlen, "temporary file in %.400s: %s", dir && *dir ? dir : "/tmp", strerror(errno));
        return -1;
    }
    close(fd);
    int rc = instr_text_to_dump(in, from, path, err, errlen);
    FILE *f = rc < 0 ? NULL : fopen(path, "rb");
    if (rc >= 0 && !f) {
        snprintf(err, errlen, "%.400s: %s", path, strerror(errno));
        rc = -1;
    }
    if (f) {
        char buf[1 << 16];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, f)) > 0)
            if (fwrite(buf, 1, n, stdout) != n)
                break;
        if (ferror(f) || fflush(stdout) != 0 || ferror(stdout)) {
            snprintf(err, errlen, "writing the dump to standard output: %s", strerror(errno));
            rc = -1;
        }
        fclose(f);
    }
    remove(path);
    return rc;
}

static int usage_error(const char *what)
{
    fprintf(stderr, PROG ": %s; try '" PROG " --help'\n", what);
    return 1;
}

int main(int argc, char **argv)
{
    enum { OPT_FROM_TEXT = 256, OPT_VERSION };
    static const struct option long_opts[] = {
        {"from-text", required_argument, NULL, OPT_FROM_TEXT},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0},
    };
    const char *from = NULL, *out = NULL, *dump = NULL;
    char err[512];
    argv[0] = (char *)PROG; /* getopt's messages start with it */
    int opt;
    while ((opt = getopt_long(argc, argv, "ho:", long_opts, NULL)) != -1) {
        switch (opt) {
        case 'h':
            usage(stdout);
            return 0;
        case OPT_VERSION:
            printf(PROG " (instr) %s\n", INSTR_VERSION);
            return 0;
        case OPT_FROM_TEXT:
            from = optarg;
            break;
        case 'o':
            out = optarg;
            break;
        default:
            fprintf(stderr, PROG ": try '" PROG " --help' for more information\n");
            return 1;
        }
    }
    if (optind < argc)
        dump = argv[optind++];
    if (optind < argc)
        return usage_error("one dump at a time");
    if (from) {
        if (!out || dump)
            return usage_error("--from-text takes -o OUT and no dump");
        FILE *in = strcmp(from, "-") ? fopen(from, "r") : stdin;
        if (!in) {
            fprintf(stderr, PROG ": %s: %s\n", from, strerror(errno));
            return 2;
        }
        int to_stdout = !strcmp(out, "-");
        int rc = to_stdout ? text_to_stdout(in, from, err, sizeof err) : instr_text_to_dump(in, from, out, err, sizeof err);
        if (in != stdin)
            fclose(in);
        if (rc < 0) {
            fprintf(stderr, PROG ": %s\n", err);
            if (!to_stdout)
                remove(out);
            return 2;
        }
        return 0;
    }
    if (!dump)
        return usage_error("no dump");
    if (out && strcmp(out, "-"))
        return usage_error("-o is for --from-text (the text form goes to standard output)");
    struct instr_dump d;
    if (instr_dump_open(&d, dump, err, sizeof err) < 0) {
        fprintf(stderr, PROG ": %s\n", err);
        return 2;
    }
    size_t nbad = 0;
    int rc = instr_text_write(stdout, &d, &nbad, err, sizeof err);
    int warned = d.nwarnings || nbad;
    for (size_t i = 0; i < d.nwarnings; i++)
        fprintf(stderr, PROG ": warning: %s\n", d.warnings[i]);
    instr_dump_close(&d);
    if (fflush(stdout) != 0 || rc < 0) {
        fprintf(stderr, PROG ": %s\n", rc < 0 ? err : "write error");
        return 2;
    }
    return warned ? 3 : 0;
}
