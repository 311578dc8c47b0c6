/* filter.c - the record-time filters' test program (check-filter.sh):
 * calls whose counts, depths and durations are known. */
#include <stdio.h>

static volatile long sink;

__attribute__((noinline)) void leaf(int i) { sink += i; }
__attribute__((noinline)) void mid(int i) { leaf(i); leaf(i + 1); }
__attribute__((noinline)) void slow(void)
{
    for (long i = 0; i < 2000000; i++)
        sink += i;
}
__attribute__((noinline)) void phase(void)
{
    for (int i = 0; i < 100; i++)
        mid(i);
    slow();
}
__attribute__((noinline)) void outside(void) { mid(0); }

int main(void)
{
    outside();
    phase();
    outside();
    printf("leaf 204\nmid 102\nslow 1\nphase 1\noutside 2\nmain 1\n");
    return 0;
}
