/* clones.c - a function's identity across builds: its name without the
 * suffixes of GCC's clones (instr_name_origin, report.h), by which Self %
 * matches samples of another build and --diff matches two runs. */
#include <string.h>

#include "report.h"

/* A clone suffix segment GCC appends ("foo.constprop.0.isra.0", "foo.cold"). */
static int clone_word(const char *w, size_t n)
{
    static const char *const words[] = {"constprop", "isra", "part", "cold", "lto_priv", "localalias", "clone"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strlen(words[i]) == n && !memcmp(w, words[i], n))
            return 1;
    return 0;
}

static int digits(const char *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (w[i] < '0' || w[i] > '9')
            return 0;
    return n > 0;
}

/* Whether s (just after a '.') is clone segments to the end, the first a word. */
static int clone_tail(const char *s)
{
    int first = 1;
    for (;;) {
        size_t n = strcspn(s, ".");
        if (first ? !clone_word(s, n) : !clone_word(s, n) && !digits(s, n))
            return 0;
        first = 0;
        if (!s[n])
            return 1;
        s += n + 1;
    }
}

void instr_name_origin(const char *name, char *buf, size_t len)
{
    if (!len)
        return;
    size_t n = 0;
    /* The demangler's " [clone .constprop.0]" (C++): left out wherever it is. */
    for (const char *p = name; *p && n + 1 < len;) {
        if (!strncmp(p, " [clone .", 9)) {
            const char *e = strchr(p, ']');
            if (e) {
                p = e + 1;
                continue;
            }
        }
        buf[n++] = *p++;
    }
    buf[n] = 0;
    /* C: "foo.constprop.0", "foo.part.0.cold" -> "foo". */
    for (char *d = strchr(buf, '.'); d; d = strchr(d + 1, '.'))
        if (d > buf && clone_tail(d + 1)) {
            *d = 0;
            break;
        }
}
