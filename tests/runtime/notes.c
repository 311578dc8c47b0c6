/* notes.c - a few calls, for check-notes.py: the runtime's words about
 * its settings reach the report. */
#include <stdio.h>

__attribute__((noinline)) static int step(int i)
{
    return i * 3 + 1;
}

int main(void)
{
    int s = 0;
    for (int i = 0; i < 100; i++)
        s += step(i);
    printf("%d\n", s);
    return 0;
}
