/* calib-cache.c - the hooks' measured cost kept once per boot, CPU,
 * detector set and hook path, so that a short process does not measure it
 * again.
 *
 * calibrate.c's measurement costs about 1 ms of CPU, more than a whole
 * plain hello world.  Its result depends on the CPU, the kernel's state
 * (a boot), the detectors armed, the runtime's hook code and the path
 * the hooks take (the fast one, or with a record-time filter set the slow
 * one, with its filters: calibrate.c), not on the program: the first
 * process measures, writes the result here, and the next ones of the same
 * user read it back.
 *
 * Where: $XDG_RUNTIME_DIR/instr/calibration when XDG_RUNTIME_DIR is an
 * absolute path to a directory of ours, else /tmp/instr-$EUID/calibration;
 * the filtering path's in calibration-filtered beside it, so that runs
 * with and without filters do not measure again in turn.
 * The file is input other users might have written, never trusted:
 *   - the directory "instr" (or "instr-$EUID") is opened with O_NOFOLLOW and
 *     must be a directory owned by the effective user with no group or
 *     other permission bits (one planted by another user in /tmp is
 *     refused, never repaired);
 *   - the file is opened with O_NOFOLLOW, must be a regular file owned by
 *     us, writable by nobody else, of exactly the record's size;
 *   - the record must carry the magic, the version, this boot's id
 *     (/proc/sys/kernel/random/boot_id), this CPU's signature (CPUID
 *     leaf 1: family, model, stepping; the brand string is not read: on
 *     a virtual machine each CPUID is a trap to the hypervisor, and the
 *     four it takes cost more than the rest of the cache), this detector
 *     set, this hook path and this runtime's build stamp, values in a sane
 *     range, and a checksum over all of it.
 * Any doubt: a fresh measurement, which then replaces the file (written
 * under a temporary name with O_EXCL|O_NOFOLLOW and renamed into place);
 * a refused directory or a bad file is said in one line.
 * INSTR_CALIBRATE=fresh always measures (and writes the result).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hook-abi.h"
#include "internal.h"

#define CACHE_MAGIC "INSTRCAL"
#define CACHE_VERSION 3u
#define CACHE_VALUES 16u        /* 4 hook kinds x (before, after, spread, rounds) */
#define CACHE_MAX_MTICKS 10000000u /* 10,000 ticks: no hook costs that much */

struct cache_record {
    char magic[8];              /* CACHE_MAGIC */
    uint32_t version;           /* CACHE_VERSION */
    uint32_t size;              /* sizeof(struct cache_record) */
    char boot_id[40];           /* /proc/sys/kernel/random/boot_id, NUL-padded */
    uint32_t cpu_signature;     /* instr__cpu_signature: CPUID 1 EAX (x86-64), MIDR_EL1 (aarch64) */
    uint32_t detector_set;      /* instr__detector.set the costs were measured with */
    uint64_t path;              /* calibrate.c's run_path(): the hooks' path measured, 0 the fast one */
    char runtime_stamp[24];     /* this runtime's build: hook ABI, compile date and time */
    uint64_t values[CACHE_VALUES]; /* mticks (rounds: a count), as calibrate.c's cost[] */
    uint64_t checksum;          /* FNV-1a 64 of every byte above */
};
/* Version 2's size (it had no path, and 8 more bytes of stamp): the
 * runtimes of one user share the file, and one of either version finds
 * the other's record whole, with its checksum in place, and passes it
 * over silently by its version instead of refusing it out loud. */
_Static_assert(sizeof(struct cache_record) == 232, "version 2's size");

static uint64_t fnv1a(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* The record's key fields for this process (everything but the values). */
static int key(struct cache_record *r, uint32_t detector_set, uint64_t path)
{
    memset(r, 0, sizeof *r);
    memcpy(r->magic, CACHE_MAGIC, 8);
    r->version = CACHE_VERSION;
    r->size = sizeof *r;
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, r->boot_id, sizeof r->boot_id - 1);
    close(fd);
    if (n < 32)
        return -1;
    r->cpu_signature = instr__cpu_signature();
    r->detector_set = detector_set;
    r->path = path;
    snprintf(r->runtime_stamp, sizeof r->runtime_stamp, "%u %s %s", (unsigned)INSTR_HOOK_ABI_VERSION, __DATE__,
             __TIME__);
    return 0;
}

/* Opens (creating it if missing) the cache directory: a descriptor, or -1
 * (refused or impossible; *why says which when refused). */
static int open_dir(const char **why)
{
    char path[4096];
    uid_t uid = instr__geteuid();
    const char *xdg = secure_getenv("XDG_RUNTIME_DIR");
    struct stat st;
    int base = -1;
    const char *name = "instr";
    char tmpname[32];
    if (xdg && xdg[0] == '/' && strlen(xdg) < sizeof path) {
        base = open(xdg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        /* XDG_RUNTIME_DIR inherited from another user (su, setpriv): not ours. */
        if (base >= 0 && (fstat(base, &st) || st.st_uid != uid || (st.st_mode & 022))) {
            close(base);
            base = -1;
        }
    }
    if (base < 0) {
        base = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        snprintf(tmpname, sizeof tmpname, "instr-%u", (unsigned)uid);
        name = tmpname;
    }
    if (base < 0)
        return -1;
    if (mkdirat(base, name, 0700) && errno != EEXIST) {
        close(base);
        return -1;
    }
    int fd = openat(base, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    close(base);
    if (fd < 0) {
        *why = "is not a directory (a symbolic link?)";
        return -1;
    }
    if (fstat(fd, &st) || st.st_uid != uid || (st.st_mode & 077)) {
        *why = st.st_uid != uid ? "belongs to another user" : "is open to other users";
        close(fd);
        return -1;
    }
    return fd;
}

static void refuse(const char *what, const char *why)
{
    instr__say("calibration cache: ", what, why, "; calibrating afresh");
}

/* The file of a path's record. */
static const char *file_name(uint64_t path)
{
    return path ? "calibration-filtered" : "calibration";
}

int instr__calib_cache_load(uint64_t *values, uint32_t detector_set, uint64_t path)
{
    struct cache_record want, got;
    const char *why = NULL;
    if (key(&want, detector_set, path))
        return -1;
    int dir = open_dir(&why);
    if (dir < 0) {
        if (why)
            refuse("the directory ", why);
        return -1;
    }
    int fd = openat(dir, file_name(path), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    close(dir);
    if (fd < 0) {
        if (errno != ENOENT)
            refuse("the file ", "cannot be opened (a symbolic link?)");
        return -1;
    }
    struct stat st;
    ssize_t n = -1;
    int ours = !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == instr__geteuid() && !(st.st_mode & 022);
    if (ours)
        n = read(fd, &got, sizeof got);
    close(fd);
    /* Another version's record, whatever its size (a runtime older or
     * newer than this one): silently measured again and replaced. */
    if (n >= (ssize_t)offsetof(struct cache_record, size) && !memcmp(got.magic, CACHE_MAGIC, 8) &&
        got.version != CACHE_VERSION)
        return -1;
    if (n != (ssize_t)sizeof got || st.st_size != (off_t)sizeof got) {
        refuse("the file ", "is not ours or not a calibration");
        return -1;
    }
    if (got.checksum != fnv1a(&got, offsetof(struct cache_record, checksum))) {
        refuse("the file ", "fails its checksum");
        return -1;
    }
    /* Another boot, CPU, detector set, path or runtime: silently measured again. */
    if (memcmp(&want, &got, offsetof(struct cache_record, values)))
        return -1;
    for (unsigned i = 0; i < CACHE_VALUES; i++)
        if ((i % 4 != 3 && got.values[i] > CACHE_MAX_MTICKS) || (i % 4 == 3 && !got.values[i])) {
            refuse("the file ", "holds values out of range");
            return -1;
        }
    memcpy(values, got.values, sizeof got.values);
    return 0;
}

void instr__calib_cache_store(const uint64_t *values, uint32_t detector_set, uint64_t path)
{
    struct cache_record r;
    const char *why = NULL;
    if (key(&r, detector_set, path))
        return;
    memcpy(r.values, values, sizeof r.values);
    r.checksum = fnv1a(&r, offsetof(struct cache_record, checksum));
    int dir = open_dir(&why);
    if (dir < 0)
        return; /* said at the load */
    char tmp[48];
    snprintf(tmp, sizeof tmp, "calibration.%d", (int)instr__getpid());
    int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
        int ok = write(fd, &r, sizeof r) == (ssize_t)sizeof r;
        close(fd);
        if (!ok || renameat(dir, tmp, dir, file_name(path)))
            unlinkat(dir, tmp, 0);
    }
    close(dir);
}
