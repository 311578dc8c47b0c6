/* sample-unwind.c - libunwind remote unwinding over a stack copy (see
 * sample-unwind.h).  Built only into instr-sample. */
#include "sample-unwind.h"

#include <libunwind.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "arrays.h"

/* Not in libunwind's public header, exported by libunwind-<arch>: the
 * binary search of an .eh_frame_hdr table, reading through our accessors. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
                                              unw_proc_info_t *pi, int need_unwind_info, void *arg);

struct instr_unwinder {
    unw_addr_space_t as;
};

struct ctx {
    const struct instr_usample *s;
    int oob; /* a read fell outside the stack copy and every module */
};

void instr_ufile_prepare(struct instr_ufile *f)
{
    uint64_t off, size, addr;
    if (f->ok && instr_elf_section(&f->elf, ".eh_frame_hdr", &off, &size, &addr) == 0 && size >= 12) {
        f->ehdr_vaddr = addr;
        f->ehdr_size = size;
        f->has_ehdr = 1;
    }
}

static const struct instr_umap *map_at(const struct instr_usample *s, uint64_t addr)
{
    size_t lo = instr_upper_bound(s->maps, s->nmaps, sizeof *s->maps, offsetof(struct instr_umap, start), addr);
    if (lo && addr < s->maps[lo - 1].end)
        return &s->maps[lo - 1];
    return NULL;
}

/* A module file's bytes at a process address: any loaded segment of a file
 * mapped executable somewhere (its .eh_frame may sit in a read-only segment
 * that is not an executable mapping). */
static int file_read(const struct instr_usample *s, uint64_t addr, uint64_t *val)
{
    for (size_t i = 0; i < s->nmaps; i++) {
        const struct instr_umap *m = &s->maps[i];
        if (!m->bias_ok || !m->file->ok)
            continue;
        uint64_t off, v = addr - m->bias;
        if (instr_elf_vaddr_to_off(&m->file->elf, v, &off) == 0 && off + 8 <= m->file->elf.size) {
            memcpy(val, m->file->elf.map + off, 8);
            return 0;
        }
    }
    return -1;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write, void *arg)
{
    (void)as;
    struct ctx *c = arg;
    const struct instr_usample *s = c->s;
    if (write)
        return -UNW_EINVAL;
    uint64_t sp = s->regs[INSTR_UREG_SP];
    if (addr >= sp && addr - sp + 8 <= s->stack_size) {
        memcpy(valp, s->stack + (addr - sp), 8);
        return 0;
    }
    uint64_t v;
    if (file_read(s, addr, &v) == 0) {
        *valp = v;
        return 0;
    }
    c->oob = 1;
    return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *valp, int write, void *arg)
{
    (void)as;
    struct ctx *c = arg;
    int i = instr_ureg_of_unw(reg); /* libunwind's numbering -> the sample's perf order */
    if (write || i < 0)
        return -UNW_EBADREG;
    *valp = c->s->regs[i];
    return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg)
{
    (void)as, (void)reg, (void)val, (void)write, (void)arg;
    return -UNW_EINVAL;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need, void *arg)
{
    struct ctx *c = arg;
    const struct instr_umap *m = map_at(c->s, ip);
    if (!m || !m->bias_ok || !m->file->has_ehdr)
        return -UNW_ENOINFO;
    const struct instr_ufile *f = m->file;
    uint64_t off;
    if (instr_elf_vaddr_to_off(&f->elf, f->ehdr_vaddr, &off) || off + 12 > f->elf.size)
        return -UNW_ENOINFO;
    const uint8_t *h = f->elf.map + off;
    /* version 1, eh_frame_ptr sdata4|pcrel, fde_count udata4, table datarel sdata4: the layout
     * every GNU toolchain writes; anything else is left alone. */
    if (h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b)
        return -UNW_ENOINFO;
    uint32_t count;
    memcpy(&count, h + 8, 4);
    if ((uint64_t)count * 8 + 12 > f->ehdr_size)
        return -UNW_ENOINFO;
    unw_dyn_info_t di;
    memset(&di, 0, sizeof di);
    di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di.start_ip = m->start;
    di.end_ip = m->end;
    di.u.rti.segbase = f->ehdr_vaddr + m->bias;
    di.u.rti.table_data = f->ehdr_vaddr + m->bias + 12;
    di.u.rti.table_len = (uint64_t)count * 8 / sizeof(unw_word_t);
    return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need, arg);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
    (void)as, (void)arg;
    free(pi->unwind_info);
    pi->unwind_info = NULL;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dilap, void *arg)
{
    (void)as, (void)dilap, (void)arg;
    return -UNW_ENOINFO;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
    (void)as, (void)c, (void)arg;
    return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len, unw_word_t *offp, void *arg)
{
    (void)as, (void)addr, (void)buf, (void)len, (void)offp, (void)arg;
    return -UNW_ENOINFO;
}

static unw_accessors_t accessors = {
    .find_proc_info = find_proc_info,
    .put_unwind_info = put_unwind_info,
    .get_dyn_info_list_addr = get_dyn_info_list_addr,
    .access_mem = access_mem,
    .access_reg = access_reg,
    .access_fpreg = access_fpreg,
    .resume = resume,
    .get_proc_name = get_proc_name,
};

const char *instr_unwinder_name(int fp_chain)
{
#define INSTR_STR2(x) #x
#define INSTR_STR(x) INSTR_STR2(x)
#define INSTR_UNWINDER "libunwind " INSTR_STR(UNW_VERSION_MAJOR) "." INSTR_STR(UNW_VERSION_MINOR) \
                       " (DWARF CFI on the stack copy)"
    return fp_chain ? INSTR_UNWINDER ", kernel frame-pointer chain where CFI gives nothing" : INSTR_UNWINDER;
}

int instr_unwinder_new(struct instr_unwinder **up)
{
    struct instr_unwinder *u = calloc(1, sizeof *u);
    if (!u || !(u->as = unw_create_addr_space(&accessors, 0))) {
        free(u);
        return -1;
    }
    unw_set_caching_policy(u->as, UNW_CACHE_GLOBAL);
    *up = u;
    return 0;
}

void instr_unwinder_free(struct instr_unwinder *u)
{
    if (u) {
        unw_destroy_addr_space(u->as);
        free(u);
    }
}

void instr_unwinder_flush(struct instr_unwinder *u)
{
    unw_flush_cache(u->as, 0, 0);
}

size_t instr_unwind(struct instr_unwinder *u, const struct instr_usample *s, uint64_t *frames, size_t max,
                    int *truncated)
{
    struct ctx c = {s, 0};
    unw_cursor_t cur;
    size_t n = 0;
    *truncated = 0;
    if (!max)
        return 0;
    frames[n++] = s->regs[INSTR_UREG_IP];
    if (unw_init_remote(&cur, u->as, &c) < 0) {
        *truncated = 1;
        return n;
    }
    while (n < max) {
        int r = unw_step(&cur);
        if (r <= 0) {
            /* 0: the outermost frame (CFI says the return address is undefined). */
            if (r < 0 || c.oob)
                *truncated = 1;
            break;
        }
        unw_word_t ip;
        if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || ip == 0)
            break;
        if (!map_at(s, ip - 1)) { /* not code we know: a wrong step, not a caller */
            *truncated = 1;
            break;
        }
        frames[n++] = ip;
    }
    if (n == max)
        *truncated = 1;
    return n;
}
