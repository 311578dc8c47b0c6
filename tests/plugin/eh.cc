#include <stdexcept>
#include <cstdio>
struct Guard { int *p; ~Guard() { ++*p; } };
int counter;
__attribute__((noinline)) void thrower(int x) { if (x > 1) throw std::runtime_error("boom"); }
__attribute__((noinline)) int with_cleanup(int x) { Guard g{&counter}; thrower(x); return x; }
__attribute__((noinline)) int with_catch(int x) {
    try { return with_cleanup(x); } catch (const std::exception &) { return -1; }
}
struct S { S() { counter++; } ~S() { counter--; } };
S global_s;
int main(int argc, char **) { int r = with_catch(argc + 1); std::printf("%d %d\n", r, counter); return 0; }
