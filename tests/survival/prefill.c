/* survive-prefill: what a program sees of the runtime's prefill helper
 * (runtime/prefill.c) once it records enough for the helper to start.
 *   survive-prefill see    -> prints what it sees, one key=value a line
 *   survive-prefill exec   -> records, then execs /bin/sleep 1
 * For check-prefill.py. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static unsigned tick(unsigned x)
{
    return x * 2654435761u + 1;
}

/* About 6 M events: windows of 4 MiB, the helper's. */
static unsigned record(void)
{
    unsigned x = 1;
    for (int i = 0; i < 3000000; i++)
        x = tick(x);
    return x;
}

/* Processes whose parent is this one, and whose name starts with want. */
static int children_named(const char *want)
{
    int n = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = 0;
        char *open = strchr(buf, '('), *close = strrchr(buf, ')');
        int ppid;
        if (open && close && sscanf(close + 2, "%*c %d", &ppid) == 1 && ppid == getpid() &&
            !strncmp(open + 1, want, strlen(want)))
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

static int tasks(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    unsigned x = record();
    if (argc > 1 && !strcmp(argv[1], "exec")) {
        printf("helper=%d\n", children_named("instr-prefill"));
        fflush(stdout);
        execl("/bin/sleep", "sleep", "1", (char *)NULL);
        return 1;
    }
    printf("helper=%d\n", children_named("instr-prefill"));
    printf("tasks=%d\n", tasks());
    errno = 0;
    pid_t w = waitpid(-1, NULL, WNOHANG);
    printf("waitpid=%d errno=%d\n", (int)w, errno);
    int u = unshare(CLONE_NEWUSER);
    printf("unshare=%d errno=%d\n", u, u ? errno : 0);
    printf("x=%u\n", x);
    return 0;
}
