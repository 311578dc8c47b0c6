/* sample-secure-exec.c - will instr-sample's perf events survive PROGRAM's exec?
 *
 * The kernel takes every perf event off a process whose exec leaves it not
 * dumpable (fs/exec.c, begin_new_exec: perf_event_exit_task unless the new
 * image's dumpable mode is SUID_DUMP_USER).  instr-sample's events are
 * attached to its child before the exec (enabled by it), so such a program
 * ran with no sample at all: exit 0, an empty dump whose exe is "" (its
 * /proc/PID/exe is not ours to read either), no message.  An exec leaves
 * the process not dumpable when
 *  - its effective user or group is then not its real one: a set-user-ID
 *    file whose owner is not the real user, a set-group-ID file
 *    (group-executable) whose group is not the real group; root included
 *    (Linux 6.18: root sampling a copy set-user-ID to uid 65534 got no
 *    sample either); or a file with capabilities run by a user other than
 *    root; unless fs.suid_dumpable is 1 (then it stays dumpable);
 *  - or the file is not readable by the user (execute-only), whatever
 *    fs.suid_dumpable says.
 * The set-ID bits do nothing on a file system mounted nosuid, under
 * no_new_privs, or on a script (#!: the interpreter runs, the bits are
 * ignored).  Nothing here prints: the command says why.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sample-secure-exec.h"

/* PROGRAM as execvp would find it: the name itself if it has a slash,
 * else the first executable file of that name on PATH.  0, or -1. */
static int resolve(const char *prog, char *out, size_t size)
{
    if (strchr(prog, '/'))
        return snprintf(out, size, "%s", prog) < (int)size ? 0 : -1;
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/bin:/usr/bin";
    for (const char *p = path;; p++) {
        const char *end = strchrnul(p, ':');
        int n = end == p ? snprintf(out, size, "%s", prog)
                         : snprintf(out, size, "%.*s/%s", (int)(end - p), p, prog);
        struct stat st;
        if (n > 0 && (size_t)n < size && stat(out, &st) == 0 && S_ISREG(st.st_mode) &&
            faccessat(AT_FDCWD, out, X_OK, AT_EACCESS) == 0)
            return 0;
        if (!*end)
            return -1;
        p = end;
    }
}

static int suid_dumpable(void)
{
    int v = 0;
    FILE *f = fopen("/proc/sys/fs/suid_dumpable", "r");
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = 0;
        fclose(f);
    }
    return v;
}

static int is_script(const char *path)
{
    char b[2] = {0};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, b, 2);
    close(fd);
    return n == 2 && b[0] == '#' && b[1] == '!';
}

int instr_ss_secure_exec(const char *prog, char *why, size_t size)
{
    char path[PATH_MAX];
    struct stat st;
    if (resolve(prog, path, sizeof path) || stat(path, &st) || !S_ISREG(st.st_mode))
        return 0; /* the exec itself fails, and says why */
    if (faccessat(AT_FDCWD, path, R_OK, AT_EACCESS)) {
        snprintf(why, size,
                 "%s is not readable by this user: the kernel takes perf events off a process that "
                 "execs a file its user may not read, so it cannot be sampled (make it readable)",
                 prog);
        return 1;
    }
    struct statvfs sv;
    int setid_works = !(statvfs(path, &sv) == 0 && (sv.f_flag & ST_NOSUID)) &&
                      prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1 && !is_script(path);
    if (!setid_works || suid_dumpable() == 1)
        return 0;
    uid_t euid = st.st_mode & S_ISUID ? st.st_uid : geteuid();
    gid_t egid = (st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP) ? st.st_gid : getegid();
    if ((st.st_mode & S_ISUID) && euid != getuid()) {
        struct passwd *pw = getpwuid(st.st_uid);
        char owner[64];
        if (pw)
            snprintf(owner, sizeof owner, "%s", pw->pw_name);
        else
            snprintf(owner, sizeof owner, "uid %u", (unsigned)st.st_uid);
        snprintf(why, size,
                 "%s is set-user-ID (owner %s): the kernel takes perf events off a process whose exec "
                 "changes its user, so it cannot be sampled by another user; run instr-sample as %s, or "
                 "sample a copy without the set-user-ID bit",
                 prog, owner, owner);
        return 1;
    }
    if ((st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP) && egid != getgid()) {
        struct group *gr = getgrgid(st.st_gid);
        char group[64];
        if (gr)
            snprintf(group, sizeof group, "%s", gr->gr_name);
        else
            snprintf(group, sizeof group, "gid %u", (unsigned)st.st_gid);
        snprintf(why, size,
                 "%s is set-group-ID (group %s): the kernel takes perf events off a process whose exec "
                 "changes its group, so it cannot be sampled from another group; sample a copy without "
                 "the set-group-ID bit",
                 prog, group);
        return 1;
    }
    if (geteuid() != 0 && getxattr(path, "security.capability", NULL, 0) >= 0) {
        snprintf(why, size,
                 "%s has file capabilities: the kernel takes perf events off a process whose exec "
                 "raises its privileges, so it cannot be sampled by an ordinary user; sample a copy "
                 "without them",
                 prog);
        return 1;
    }
    return 0;
}
