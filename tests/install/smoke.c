/* A program to instrument from an installed instr: leaf() is called
 * exactly 7 times, and the event API header comes from the installation. */
#include <instr/instr.h>

__attribute__((noinline)) static int leaf(int i)
{
    return i * 3 + 1;
}

int main(void)
{
    int sum = 0;
    for (int i = 0; i < 7; i++)
        sum += leaf(i);
    instr_event("smoke");
    return sum == 70 ? 0 : 1;
}
