/* Functions for the threshold= tests: one small enough to be left out at
 * threshold=5, and three that are not, each for another reason. */
volatile int sink;

__attribute__((noinline)) int tiny(int x) { return x * 3 + 1; }

/* Small, but it loops. */
__attribute__((noinline)) int looping(int n)
{
    int s = 0;
    while (n--)
        s += n;
    return s;
}

/* Small, but it calls (and its call to tiny gets no call-site hooks). */
__attribute__((noinline)) int calling(int x) { return tiny(x) + 1; }

/* No loop, no call, but more than five statements. */
__attribute__((noinline)) int big(int x)
{
    sink = x;
    sink += 1;
    sink *= 3;
    sink ^= 7;
    sink -= 2;
    return sink;
}
