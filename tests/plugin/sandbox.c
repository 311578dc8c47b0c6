/* Calls that may put the thread in a seccomp sandbox get the
 * INSTR_SITE_SANDBOX flag (strict mode: INSTR_SITE_SANDBOX_STRICT too);
 * others, and options the compiler cannot see, do not. */
#define _GNU_SOURCE
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

struct scmp_filter_ctx_s;
int seccomp_load(struct scmp_filter_ctx_s *ctx);

void marked(void *prog, struct scmp_filter_ctx_s *ctx)
{
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0);
    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog);
    syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    seccomp_load(ctx);
}

void marked_strict(int mode)
{
    prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0);
    syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, 0);
    prctl(PR_SET_SECCOMP, mode, 0, 0, 0); /* the mode unknown: maybe strict */
}

void unmarked(int option)
{
    prctl(PR_SET_NAME, "x", 0, 0, 0);
    prctl(option, 1, 0, 0, 0);
    syscall(SYS_getpid);
    syscall(option, SECCOMP_SET_MODE_FILTER, 0, 0);
}
