/* A call GIMPLE splits into blocks of its own (tree-call-cdce: sqrt's
 * inline instruction, and the library call for errno on another path),
 * whose value a second identical call reuses (plugin test "split-call";
 * plugin/pass-empty-sites.cc): every call-site frame must close. */
#include <math.h>
#include <stdlib.h>
#define Mmax(a_, b_) ((a_) > (b_) ? (a_) : (b_))
struct plan { double *w1, *w2; };
struct plan *__attribute__((noinline)) f(int n) {
    struct plan *p = malloc(sizeof *p); if (!p) return p;
    size_t w1 = Mmax(100, (int)(1.100 * sqrt(n)));
    size_t w2 = Mmax(100, (int)(0.375 * sqrt(n)));
    p->w1 = malloc(w1 * sizeof(double)); p->w2 = malloc(w2 * sizeof(double)); return p; }
int main(int c, char **v) { for (int i = 0; i < 10; i++) free(f(atoi(v[1]) + i)); return 0; }
