/* One session, three processes: this parent, a forked child, and an
 * instrumented child program started with posix_spawn (which execs). */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

extern char **environ;

NOINLINE static int step(int x)
{
    __asm__ volatile("" : "+r"(x));
    return x + 1;
}

NOINLINE static int work(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += step(i);
    return s;
}

int main(int argc, char **argv)
{
    if (argc > 1 && argv[1][0] == 'c') { /* the spawned child */
        printf("spawned %d\n", work(30));
        return 0;
    }
    int s = work(100);
    pid_t pid = fork();
    if (pid == 0) { /* the forked child returns from main: its frames close normally */
        s = work(20);
        printf("forked %d\n", s);
        return 0;
    }
    int st;
    waitpid(pid, &st, 0);
    char *args[] = {argv[0], "child", NULL};
    pid_t sp;
    if (posix_spawn(&sp, argv[0], NULL, NULL, args, environ))
        return 1;
    waitpid(sp, &st, 0);
    printf("parent %d\n", s);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
