// shapes: a small C++ program worth profiling.
//
// Virtual calls, a template, a destructor and an exception that unwinds
// through two instrumented frames: the report shows each function with its
// demangled name, and the frames left by the exception closed when it was
// caught (counted as exception exits in the report header).  Each
// std::sin call in Polygon::area is a call site of its own (libm is not
// instrumented), so this small program records some 8 M events.
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <vector>

namespace geo {

struct Shape {
    virtual ~Shape() = default;
    virtual double area() const = 0;
};

struct Circle : Shape {
    explicit Circle(double r) : r_(r) {}
    double area() const override { return M_PI * r_ * r_; }
    double r_;
};

struct Polygon : Shape {
    explicit Polygon(int sides) : sides_(sides) {}
    // Deliberately slow: sums triangle areas one by one.
    double area() const override
    {
        double sum = 0;
        for (int i = 0; i < sides_; i++)
            sum += 0.5 * std::sin(2 * M_PI / sides_);
        return sum;
    }
    int sides_;
};

template <typename T> T total(const std::vector<std::unique_ptr<Shape>> &shapes)
{
    T sum = 0;
    for (const auto &s : shapes)
        sum += static_cast<T>(s->area());
    return sum;
}

} // namespace geo

static void check_sides(int sides)
{
    if (sides > 900)
        throw std::invalid_argument("too many sides");
}

static std::unique_ptr<geo::Shape> make_shape(int i)
{
    if (i % 2)
        return std::make_unique<geo::Circle>(i);
    check_sides(i);
    return std::make_unique<geo::Polygon>(i);
}

int main()
{
    std::vector<std::unique_ptr<geo::Shape>> shapes;
    int rejected = 0;
    for (int i = 1; i < 1000; i++) {
        try {
            shapes.push_back(make_shape(i));
        } catch (const std::invalid_argument &) {
            rejected++;
        }
    }
    double sum = 0;
    for (int round = 0; round < 20; round++)
        sum += geo::total<double>(shapes);
    std::printf("%zu shapes, %d rejected, total area %.1f\n", shapes.size(), rejected, sum);
    return 0;
}
