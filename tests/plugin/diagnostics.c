/* diagnostics.c - what GCC warns about must not change with the plugin
 * (check-plugin.sh diagnostics): the same warnings, at the same places,
 * built plain and instrumented, with -Wall -Wextra.
 *
 * -Wstringop-truncation is quiet for a strncpy, stpncpy or strncat whose
 * next statement stores into the destination (GCC looks at that one
 * statement): the call-site hook after the call must not come between
 * them (Redis's config.c and module.c warned only when instrumented). */
#include <string.h>

#define SIZE 64
static char buf[SIZE];
char *sink;

/* Quiet in both builds: the store right after the call ends the string. */
void quiet_strncpy(const char *s)
{
    strncpy(buf, s, SIZE);
    buf[SIZE - 1] = '\0';
    sink = buf;
}

void quiet_stpncpy(const char *s)
{
    char *end = stpncpy(buf, s, SIZE);
    buf[SIZE - 1] = '\0';
    sink = end;
}

void quiet_local(const char *s, char *out)
{
    char tmp[32];
    strncpy(tmp, s, sizeof tmp);
    tmp[sizeof tmp - 1] = 0;
    strcpy(out, tmp);
}

/* Warned about in both builds: nothing ends the string. */
void loud_strncpy(const char *s)
{
    strncpy(buf, s, SIZE);
    sink = buf;
}

/* Warned about in both builds: the bound is the source's length. */
void loud_length(char *d, const char *s)
{
    strncpy(d, s, strlen(s));
}

/* -Wextra's own (not about strings), in both builds. */
int loud_unused(int a, int b)
{
    return a;
}
