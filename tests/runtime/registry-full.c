/* registry-full.c - a program with more functions and call sites than the
 * runtime's first registries hold (1,024 each), for check-registry-full.py:
 * run with mremap-fail.so preloaded, the registries cannot grow, and the
 * calls of the functions left without an id must be counted as dropped
 * calls (ENTER) and call-site calls (CALL), not as events of no kind. */
#include <stdio.h>

int ext(int x); /* registry-full-ext.c, not instrumented: a call site */

#define F(n)                                                                                       \
    __attribute__((noinline)) static int f##n(int x) { return ext(x) + n; }
#define F10(n) F(n##0) F(n##1) F(n##2) F(n##3) F(n##4) F(n##5) F(n##6) F(n##7) F(n##8) F(n##9)
#define F100(n)                                                                                    \
    F10(n##0) F10(n##1) F10(n##2) F10(n##3) F10(n##4) F10(n##5) F10(n##6) F10(n##7) F10(n##8)      \
    F10(n##9)
F100(1) F100(2) F100(3) F100(4) F100(5) F100(6) F100(7) F100(8) F100(9) F100(10) F100(11) F100(12)

#define C(n) s += f##n(s);
#define C10(n) C(n##0) C(n##1) C(n##2) C(n##3) C(n##4) C(n##5) C(n##6) C(n##7) C(n##8) C(n##9)
#define C100(n)                                                                                    \
    C10(n##0) C10(n##1) C10(n##2) C10(n##3) C10(n##4) C10(n##5) C10(n##6) C10(n##7) C10(n##8)      \
    C10(n##9)

int main(void)
{
    int s = 0;
    for (int round = 0; round < 2; round++) {
        C100(1) C100(2) C100(3) C100(4) C100(5) C100(6) C100(7) C100(8) C100(9) C100(10) C100(11)
        C100(12)
    }
    printf("%d\n", s & 1); /* keeps the sums; 1 call site more */
    return 0;
}
