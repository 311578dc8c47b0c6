/* emit.c - CSV fields, JSON strings and numbers, the JSON writer (emit.h). */
#include "emit.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void instr_csv_field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

/* The length of the valid UTF-8 sequence at p (1..4), or 0 if p does not
 * start one (RFC 3629: no overlong forms, no surrogates, <= U+10FFFF). */
static int utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    if (c < 0x80)
        return 1;
    int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (!n)
        return 0;
    /* The second byte's range depends on the first (overlongs, surrogates, > U+10FFFF). */
    unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
    unsigned hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (int i = 2; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

void instr_json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*p < 0x20 || *p == 0x7f) {
                fprintf(out, "\\u%04x", *p);
            } else {
                int n = utf8_len(p);
                if (!n) {
                    fputs("\\ufffd", out); /* not UTF-8: the replacement character */
                    p++;
                    continue;
                }
                fwrite(p, 1, (size_t)n, out);
                p += n;
                continue;
            }
        }
        p++;
    }
    fputc('"', out);
}

void instr_json_double(FILE *out, const char *fmt, double x)
{
    if (!isfinite(x))
        fputs("null", out);
    else
        fprintf(out, fmt, x);
}

void instr_json_ns(FILE *out, double ns)
{
    instr_json_double(out, "%.0f", ns);
}

/* ---- the writer ---- */

void instr_json_init(struct instr_json *j, FILE *out)
{
    memset(j, 0, sizeof *j);
    j->out = out;
}

static void indent(FILE *out, int depth)
{
    fputc('\n', out);
    for (int i = 0; i < depth; i++)
        fputs("  ", out);
}

void instr_json_key(struct instr_json *j, const char *key)
{
    if (j->depth > 0 && j->depth <= INSTR_JSON_MAX_DEPTH) {
        int d = j->depth - 1;
        if (j->inl[d]) {
            if (j->n[d])
                fputs(", ", j->out);
        } else {
            if (j->n[d])
                fputc(',', j->out);
            indent(j->out, j->depth);
        }
        if (j->n[d] < 2)
            j->n[d]++;
    }
    if (key) {
        instr_json_str(j->out, key);
        fputs(": ", j->out);
    }
}

void instr_json_open(struct instr_json *j, const char *key, char brace, enum instr_json_layout layout)
{
    instr_json_key(j, key);
    fputc(brace, j->out);
    if (j->depth < INSTR_JSON_MAX_DEPTH) {
        j->n[j->depth] = 0;
        j->inl[j->depth] = layout == INSTR_JSON_INLINE;
        j->close[j->depth] = brace == '[' ? ']' : '}';
    }
    j->depth++;
}

void instr_json_close(struct instr_json *j)
{
    if (j->depth <= 0)
        return;
    int d = --j->depth;
    if (d >= INSTR_JSON_MAX_DEPTH)
        return;
    if (j->n[d] && !j->inl[d])
        indent(j->out, d);
    fputc(j->close[d], j->out);
}

void instr_json_key_str(struct instr_json *j, const char *key, const char *s)
{
    instr_json_key(j, key);
    instr_json_str(j->out, s);
}

void instr_json_key_u64(struct instr_json *j, const char *key, uint64_t v)
{
    instr_json_key(j, key);
    fprintf(j->out, "%" PRIu64, v);
}

void instr_json_key_num(struct instr_json *j, const char *key, const char *fmt, double x)
{
    instr_json_key(j, key);
    instr_json_double(j->out, fmt, x);
}

void instr_json_key_ns(struct instr_json *j, const char *key, double ns)
{
    instr_json_key_num(j, key, "%.0f", ns);
}

void instr_json_key_bool(struct instr_json *j, const char *key, int b)
{
    instr_json_key(j, key);
    fputs(b ? "true" : "false", j->out);
}

void instr_json_key_null(struct instr_json *j, const char *key)
{
    instr_json_key(j, key);
    fputs("null", j->out);
}
