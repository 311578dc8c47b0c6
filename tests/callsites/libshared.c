/* An instrumented shared library linked normally. */
__attribute__((noinline)) int shared_leaf(int x)
{
    __asm__ volatile("" : "+r"(x));
    return x + 1;
}

int shared_entry(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += shared_leaf(i);
    return s;
}
