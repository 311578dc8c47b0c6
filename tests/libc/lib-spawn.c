/* lib-spawn.c - an uninstrumented library that forks, as Tcl's exec and
 * spawn helpers do: spawn_exec forks and execs a program in the child
 * without returning to its caller; spawn_call forks and calls back into
 * the program in the child, which then exits; exec_as replaces the
 * process itself, as a library's exec would. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int spawn_exec(const char *path)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl(path, path, (char *)0);
        _exit(127);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int spawn_call(void (*fn)(void))
{
    pid_t pid = fork();
    if (pid == 0) {
        fn();
        exit(0);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int exec_as(const char *path, const char *arg)
{
    execl(path, path, arg, (char *)0);
    return -1;
}
