/* An instrumented shared library loaded with dlopen and closed before exit. */
__attribute__((noinline)) static int plugin_leaf(int x)
{
    __asm__ volatile("" : "+r"(x));
    return x * 3;
}

int plugin_entry(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += plugin_leaf(i);
    return s;
}
