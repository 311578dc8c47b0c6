/* work() runs 5 times and skipped() twice; app leaves skipped() out with
 * plugin arguments, app_target instruments both. */
#include <instr/instr.h>

__attribute__((noinline)) int work(int i)
{
    return i + 1;
}

__attribute__((noinline)) int skipped(int i)
{
    return i * 2;
}

int main(void)
{
    int sum = 0;
    for (int i = 0; i < 5; i++)
        sum += work(i);
    sum += skipped(1) + skipped(2);
    instr_counter("sum", sum);
    return sum == 21 ? 0 : 1;
}
