/* bind-late.c - main calls the late binding first, before its entry hook
 * (hook-abi.h, "Deferred binding"); no other function does, and only
 * main's unit defines __instr_main_here (check-plugin.sh, case
 * bind-late; -DNO_MAIN compiles a unit without main). */
__attribute__((noinline)) int helper(int x)
{
    return x * 3 + 1;
}

#ifndef NO_MAIN
int main(int argc, char **argv)
{
    (void)argv;
    return helper(argc);
}
#endif
