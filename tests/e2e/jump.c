/* longjmp leaves two instrumented frames; the runtime repairs the stack. */
#include <setjmp.h>
#include <stdio.h>
#include "e2e-util.h"

static jmp_buf env;

NOINLINE static void deep2(void)
{
    e2e_spin_ms(5);
    longjmp(env, 1);
}

NOINLINE static void deep1(void)
{
    deep2();
    __asm__ volatile("");
}

NOINLINE static void after(void)
{
    e2e_spin_ms(30);
}

NOINLINE static void top(void)
{
    if (!setjmp(env))
        deep1();
    after();
}

int main(void)
{
    top();
    puts("jumped");
    return 0;
}
