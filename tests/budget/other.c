/* A second unit with one tiny function: threshold= counts add up over units. */
__attribute__((noinline)) int other_tiny(int x) { return x ^ 5; }

/* Not tiny: it loops. */
__attribute__((noinline)) int other_loop(int n)
{
    int s = 0;
    while (n--)
        s += n;
    return s;
}
