// survive-terminate.cpp - an uncaught C++ exception: std::terminate, abort.
// The frames it leaves open are still open when SIGABRT ends the process.
#include <cstdio>
#include <stdexcept>

#define KEEP __attribute__((noinline, noclone))

KEEP int work(int x)
{
    __asm__ volatile("" : "+r"(x));
    return x * 3 + 1;
}

KEEP void thrower(int depth)
{
    if (depth > 0) {
        thrower(depth - 1);
        __asm__ volatile("" ::: "memory"); // not a tail call: keep the frames
        return;
    }
    throw std::runtime_error("nobody catches this");
}

int main()
{
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    for (int i = 0; i < 100; i++)
        work(i);
    std::printf("throwing\n");
    thrower(2);
    return 0;
}
