/* switch-signal.c - INSTR_SIGNAL's test program (check-signal.sh): four phases
 * of 100 calls of work(), the signal raised between them. */
#include <signal.h>
#include <stdio.h>

static volatile long sink;

__attribute__((noinline)) void work(int i) { sink += i; }

int main(void)
{
    for (int phase = 0; phase < 4; phase++) {
        for (int i = 0; i < 100; i++)
            work(i);
        if (phase < 3)
            raise(SIGUSR2);
    }
    printf("work 400\n");
    return 0;
}
