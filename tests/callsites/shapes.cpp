// Virtual calls (indirect, to instrumented functions: one frame each), and
// an exception thrown by an uninstrumented function (lib-throw.cpp, built
// without the plugin) through two instrumented frames to a catch.
#include <cstdio>
#include <stdexcept>

#define NOINLINE __attribute__((noinline, noclone))

void lib_throw(int i); // uninstrumented

struct Shape {
    virtual ~Shape() {}
    virtual double area() const = 0;
};
struct Circle : Shape {
    double r = 1;
    NOINLINE double area() const override { return 3.14159 * r * r; }
};
struct Square : Shape {
    double s = 2;
    NOINLINE double area() const override { return s * s; }
};

NOINLINE static double total(Shape *const *v, int n)
{
    double t = 0;
    for (int i = 0; i < n; i++)
        t += v[i]->area();
    return t;
}

NOINLINE static void inner(int i)
{
    lib_throw(i);
}

NOINLINE static void middle(int i)
{
    inner(i);
}

NOINLINE static int outer(int i)
{
    try {
        middle(i);
    } catch (const std::exception &) {
        return 1;
    }
    return 0;
}

int main()
{
    Circle c;
    Square s;
    Shape *v[30];
    for (int i = 0; i < 30; i++)
        v[i] = i % 3 ? static_cast<Shape *>(&c) : static_cast<Shape *>(&s);
    double a = total(v, 30);
    int caught = 0;
    for (int i = 0; i < 4; i++)
        caught += outer(i);
    std::printf("area=%.1f caught=%d\n", a, caught);
    return caught == 4 ? 0 : 1;
}
