// Built without the plugin: an uninstrumented callee that throws.
#include <stdexcept>

void lib_throw(int i)
{
    if (i >= 0)
        throw std::runtime_error("lib_throw");
}
