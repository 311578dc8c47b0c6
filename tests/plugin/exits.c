#include <stdio.h>
int g;
__attribute__((noinline)) int many_returns(int x)
{
    if (x < 0) return -1;
    if (x == 0) return 0;
    for (int i = 0; i < x; i++) { g += i; if (g > 1000) return 2; }
    return 1;
}
__attribute__((noinline)) int loop_at_entry(int n)
{
top:
    n--;
    if (n > 0) goto top;
    return n;
}
__attribute__((no_instrument_function)) int quiet(int x) { return x + 1; }
static int helper(int x) { return x * 3; }
__attribute__((noinline)) void tailer(int x) { if (x) printf("%d\n", x); }
void tc(int x) { tailer(x + 1); }
int main(int argc, char **argv)
{
    (void)argv;
    tc(helper(argc));
    return many_returns(argc) + loop_at_entry(argc) + quiet(argc);
}
