/* Which calls get call-site hooks (plugin test "callsites"). */
#include <stdlib.h>

extern int ext(int);
__attribute__((no_instrument_function)) int quiet(int);
int (*fp)(int);

__attribute__((noinline)) static int local(int x)
{
    __asm__ volatile("" : "+r"(x));
    return x + 1;
}

int caller(int x)
{
    int r = ext(x);              /* hooked */
    r += local(x);               /* hooked, except with callsites=external */
    r += fp(x);                  /* hooked: indirect, the target is passed */
    r += __builtin_expect(x, 0); /* not a call */
    r += quiet(x);               /* the user hid it */
    if (x > 100)
        abort();                 /* noreturn: no "after" */
    return r;
}
