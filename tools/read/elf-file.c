/* elf-file.c - bounds-checked reading of ELF files (see elf-file.h). */
#include "elf-file.h"

#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dump-reader.h" /* error codes */

static int in_file(const struct instr_elf *e, uint64_t off, uint64_t len)
{
    return off <= e->size && len <= e->size - off;
}

static int parse(struct instr_elf *e);

int instr_elf_open_vdso(struct instr_elf *e)
{
    memset(e, 0, sizeof *e);
    uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
    FILE *f = base ? fopen("/proc/self/maps", "r") : NULL;
    char line[512];
    size_t size = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long long lo, hi;
        if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && lo == base && strstr(line, "[vdso]"))
            size = (size_t)(hi - lo);
    }
    if (f)
        fclose(f);
    if (!size)
        return -1;
    /* A private copy: instr_elf_close unmaps what it was given. */
    void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return -1;
    memcpy(m, (const void *)base, size);
    e->map = m;
    e->size = size;
    return parse(e) < 0 ? -1 : 0;
}

int instr_elf_open(struct instr_elf *e, const char *path)
{
    memset(e, 0, sizeof *e);
    /* O_NONBLOCK: a path in a hostile dump may name a FIFO. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return INSTR_EIO;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        return INSTR_EIO;
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return INSTR_EIO;
    e->map = m;
    e->size = (size_t)st.st_size;
    return parse(e);
}

static int parse(struct instr_elf *e)
{
    Elf64_Ehdr eh;
    if (e->size < sizeof eh)
        goto bad;
    memcpy(&eh, e->map, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != ELFDATA2LSB)
        goto bad;
    if (eh.e_phnum && (eh.e_phentsize != sizeof(Elf64_Phdr) ||
                       !in_file(e, eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr))))
        goto bad;
    if (eh.e_phnum && !(e->segs = calloc(eh.e_phnum, sizeof *e->segs)))
        goto bad;
    for (size_t i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, e->map + eh.e_phoff + i * sizeof ph, sizeof ph);
        if (ph.p_type != PT_LOAD)
            continue;
        e->segs[e->nsegs++] = (struct instr_elf_seg){ph.p_vaddr, ph.p_memsz, ph.p_offset, ph.p_filesz};
    }
    if (eh.e_shnum && eh.e_shentsize == sizeof(Elf64_Shdr) &&
        in_file(e, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr)) && eh.e_shstrndx < eh.e_shnum) {
        e->shdrs = e->map + eh.e_shoff;
        e->nsh = eh.e_shnum;
        Elf64_Shdr s;
        memcpy(&s, e->shdrs + (size_t)eh.e_shstrndx * sizeof s, sizeof s);
        if (in_file(e, s.sh_offset, s.sh_size)) {
            e->shstr = (const char *)e->map + s.sh_offset;
            e->shstr_len = s.sh_size;
        }
    }
    return 0;
bad:
    instr_elf_close(e);
    return INSTR_ENOTDUMP;
}

void instr_elf_close(struct instr_elf *e)
{
    if (e->map)
        munmap((void *)e->map, e->size);
    free(e->segs);
    memset(e, 0, sizeof *e);
}

static int shdr(const struct instr_elf *e, size_t i, Elf64_Shdr *s)
{
    if (i >= e->nsh)
        return -1;
    memcpy(s, e->shdrs + i * sizeof *s, sizeof *s);
    return 0;
}

/* A NUL-terminated string at off in a table of len bytes, else NULL. */
static const char *str_at(const char *table, size_t len, uint64_t off)
{
    if (!table || off >= len || !memchr(table + off, 0, len - off))
        return NULL;
    return table + off;
}

int instr_elf_section(const struct instr_elf *e, const char *name, uint64_t *off, uint64_t *size, uint64_t *addr)
{
    Elf64_Shdr s;
    for (size_t i = 0; shdr(e, i, &s) == 0; i++) {
        const char *n = str_at(e->shstr, e->shstr_len, s.sh_name);
        if (n && !strcmp(n, name) && s.sh_type != SHT_NOBITS && in_file(e, s.sh_offset, s.sh_size)) {
            *off = s.sh_offset;
            *size = s.sh_size;
            if (addr)
                *addr = s.sh_addr;
            return 0;
        }
    }
    return -1;
}

int instr_elf_vaddr_to_off(const struct instr_elf *e, uint64_t vaddr, uint64_t *off)
{
    for (size_t i = 0; i < e->nsegs; i++) {
        const struct instr_elf_seg *g = &e->segs[i];
        if (vaddr >= g->vaddr && vaddr - g->vaddr < g->filesz) {
            *off = g->off + (vaddr - g->vaddr);
            return 0;
        }
    }
    return -1;
}

int instr_elf_bias(const struct instr_elf *e, uint64_t start, uint64_t pgoff, uint64_t *bias)
{
    /* The segment whose (page-rounded) file range holds pgoff: the mapping
     * puts file offset o at start + (o - pgoff), and vaddr v = p_vaddr +
     * (o - p_offset), so bias = start - pgoff + p_offset - p_vaddr. */
    for (size_t i = 0; i < e->nsegs; i++) {
        const struct instr_elf_seg *g = &e->segs[i];
        uint64_t lo = g->off & ~(uint64_t)0xfff;
        if (pgoff >= lo && pgoff < g->off + (g->filesz ? g->filesz : 1)) {
            *bias = start - pgoff + g->off - g->vaddr;
            return 0;
        }
    }
    return -1;
}
