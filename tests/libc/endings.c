/* endings.c - processes that end in a call that does not return (issue 38
 * §2): argv[1] says how.  exec: execl of /bin/true from run_exec; exit:
 * _exit(7) from leave; daemon: daemon() from detach (the daemon writes a file
 * named argv[2] and exits); kill: SIGKILL from die (not a known ending);
 * exec-fails: an execl that fails and returns, then a normal exit. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile int sink;

__attribute__((noinline)) static void work(int n)
{
    for (int i = 0; i < n; i++)
        sink += i;
}

__attribute__((noinline)) static void run_exec(const char *path)
{
    work(1000);
    execl(path, "true", (char *)NULL);
    work(10); /* only when it failed */
}

__attribute__((noinline)) static void leave(void)
{
    work(1000);
    _exit(7);
}

__attribute__((noinline)) static void detach(const char *done)
{
    work(1000);
    if (daemon(1, 1) != 0)
        exit(2);
    work(100); /* the daemon, in the fork child */
    FILE *f = fopen(done, "w");
    if (f)
        fclose(f);
}

__attribute__((noinline)) static void die(void)
{
    work(1000);
    raise(SIGKILL);
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "";
    if (!strcmp(how, "exec"))
        run_exec("/bin/true");
    else if (!strcmp(how, "exit"))
        leave();
    else if (!strcmp(how, "daemon"))
        detach(argc > 2 ? argv[2] : "/dev/null");
    else if (!strcmp(how, "kill"))
        die();
    else if (!strcmp(how, "exec-fails"))
        run_exec("/nonexistent/instr-endings");
    return 0;
}
