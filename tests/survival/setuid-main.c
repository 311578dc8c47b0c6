/* setuid-main.c - a program linked with a binding (binding-gen.cc): it
 * prints its effective user ID.  The planted runtime (planted.c), if the
 * binding loads it, leaves a marker file. */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    printf("euid %d\n", (int)geteuid());
    return 0;
}
