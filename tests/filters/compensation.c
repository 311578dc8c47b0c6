/* compensation.c - a loop calling a leaf of about 1 ns, for
 * check-compensation.py: its compensated Exclusive a call under each
 * record-time filter against the unfiltered run's (issue 37 §3).  With a
 * second argument "switch", recording is switched off and on before the
 * loop (this build is not switchable: its hooks take the slow path from
 * then on). */
#include <instr/instr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) int leaf(int x)
{
    __asm__ volatile("" : "+r"(x));
    return x + 1;
}

__attribute__((noinline)) int work(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += leaf(i);
    return s;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 500000;
    if (argc > 2 && !strcmp(argv[2], "switch")) {
        instr_stop();
        instr_start();
    }
    printf("calls=%d sum=%d\n", n, work(n));
    return 0;
}
