/* compensation.c - a loop calling a leaf of about 1 ns, for
 * check-compensation.py: its compensated Exclusive a call under each
 * record-time filter against the unfiltered run's (issue 37 §3). */
#include <stdio.h>
#include <stdlib.h>

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
    printf("calls=%d sum=%d\n", n, work(n));
    return 0;
}
