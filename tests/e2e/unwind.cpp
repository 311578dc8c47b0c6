// An exception unwinds through two instrumented frames (one with a
// destructor cleanup); the catcher then keeps busy, so frames closed late
// would show the catcher's time.
#include <cstdio>
#include <stdexcept>
#include "e2e-util.h"

struct Guard {
    ~Guard() { e2e_spin_ms(0); }
};

NOINLINE static void inner(int i)
{
    e2e_spin_ms(10);
    if (i >= 0)
        throw std::runtime_error("inner");
}

NOINLINE static void middle(int i)
{
    Guard g;
    inner(i);
}

NOINLINE static int outer(int i)
{
    try {
        middle(i);
    } catch (const std::exception &) {
        e2e_spin_ms(30);
        return 1;
    }
    return 0;
}

int main()
{
    int caught = 0;
    for (int i = 0; i < 3; i++)
        caught += outer(i);
    std::printf("caught=%d\n", caught);
    return caught == 3 ? 0 : 1;
}
