/* Functions of three modules: this program, a library it links, and one it
 * dlopens, calls and dlcloses (its names must survive the dlclose). */
#include <dlfcn.h>
#include <stdio.h>

int shared_entry(int n);

int main(int argc, char **argv)
{
    (void)argc;
    int s = shared_entry(10);
    char path[4096];
    snprintf(path, sizeof path, "%s", argv[1]);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    int (*entry)(int) = (int (*)(int))dlsym(h, "plugin_entry");
    if (!entry)
        return 1;
    s += entry(7);
    dlclose(h);
    printf("sum=%d\n", s);
    return 0;
}
