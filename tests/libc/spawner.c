/* spawner.c - an instrumented program whose children are forked by an
 * uninstrumented library (lib-spawn.c): three that exec argv[1] at once,
 * and one that calls back into the program (in_child) before it exits.
 * With "exec-self", it replaces itself by exec inside the library with
 * itself, which then runs in_child once as "second". */
#include <stdio.h>
#include <string.h>

int spawn_exec(const char *path);
int spawn_call(void (*fn)(void));
int exec_as(const char *path, const char *arg);

static volatile unsigned sink;

__attribute__((noinline)) static void in_child(void)
{
    for (unsigned i = 0; i < 1000; i++)
        sink += i;
}

int main(int argc, char **argv)
{
    int bad = 0;
    if (argc > 1 && !strcmp(argv[1], "exec-self"))
        return exec_as(argv[0], "second") ? 2 : 0;
    if (argc > 1 && !strcmp(argv[1], "second")) {
        in_child();
        return 0;
    }
    for (int i = 0; i < 3; i++)
        bad |= spawn_exec(argc > 1 ? argv[1] : "/bin/true") != 0;
    bad |= spawn_call(in_child) != 0;
    printf("%s\n", bad ? "failed" : "ok");
    return bad;
}
