/* hostile-lib.c - a library the hostile program dlopens, calls and
 * dlcloses (built with the plugin for the instrumented program, without it
 * for the oracle). */
#define KEEP __attribute__((noinline, noclone))

KEEP int lib_step(int x)
{
    __asm__ volatile("" : "+r"(x));
    return x * 5 + 2;
}

int lib_work(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += lib_step(i);
    return s;
}
