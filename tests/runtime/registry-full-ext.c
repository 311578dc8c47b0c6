/* registry-full-ext.c - the uninstrumented callee of registry-full.c's
 * 1,200 call sites. */
int ext(int x)
{
    return x >> 1;
}
