/* swap-dir.c - a program whose dump directory is swapped under it (issue 14
 * item 14), run by check-swap-dir.py: it works, says "ready", waits for a
 * line on stdin (meanwhile its working directory is renamed and replaced by
 * a link elsewhere), then forks a child that works and exits.  The child's
 * dump must go to the directory the parent started in, wherever it now is. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#define KEEP __attribute__((noinline, noclone))

static volatile int sink;

KEEP int work(int x)
{
    sink = x;
    return x + 1;
}

static void work_n(int n)
{
    for (int i = 0; i < n; i++)
        work(i);
}

int main(void)
{
    char line[16];
    work_n(100);
    printf("ready\n");
    fflush(stdout);
    if (!fgets(line, sizeof line, stdin))
        return 97;
    pid_t p = fork();
    if (p == 0) {
        work_n(10);
        _exit(0);
    }
    int st;
    if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st))
        return 96;
    work_n(100);
    printf("child done\n");
    return 0;
}
