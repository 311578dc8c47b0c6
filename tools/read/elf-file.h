/* elf-file.h - just enough of an ELF file for sampling: its loadable
 * segments, sections by name, function symbols, build-id and debuglink.
 *
 * Files named by a dump are hostile input like the dump: every header,
 * offset and string is bounds-checked against the mapped file.  Library
 * code: never prints or exits.
 */
#ifndef INSTR_ELF_FILE_H
#define INSTR_ELF_FILE_H

#include <stddef.h>
#include <stdint.h>

struct instr_elf_seg {
    uint64_t vaddr, memsz; /* p_vaddr, p_memsz */
    uint64_t off, filesz;  /* p_offset, p_filesz */
};

struct instr_elf_sym {
    uint64_t addr; /* st_value */
    uint64_t size; /* st_size (0: up to the next symbol) */
    const char *name; /* inside the mapping */
    uint8_t rank;     /* binding preference at one address: 0 global, 1 weak, 2 local */
};

struct instr_elf {
    const uint8_t *map; /* whole file, read-only */
    size_t size;
    struct instr_elf_seg *segs; /* PT_LOAD, in file order */
    size_t nsegs;
    const uint8_t *shdrs; /* section headers (inside map), or NULL */
    size_t nsh;
    const char *shstr; /* section name table */
    size_t shstr_len;
    struct instr_elf_sym *syms; /* functions, sorted by address (after instr_elf_load_symbols) */
    size_t nsyms;
};

/* 0, or a negative INSTR_E* code (not a 64-bit little-endian ELF file, unreadable). */
int instr_elf_open(struct instr_elf *e, const char *path);
void instr_elf_close(struct instr_elf *e);
/* This process's own vDSO as an ELF file (the kernel gives every process
 * the same one): how "[vdso]" mappings of a sampled program on this machine
 * are unwound and named.  0 or -1. */
int instr_elf_open_vdso(struct instr_elf *e);

/* A section's file range; 0 if found and inside the file, else -1.  addr:
 * its sh_addr. */
int instr_elf_section(const struct instr_elf *e, const char *name, uint64_t *off, uint64_t *size, uint64_t *addr);

/* File offset <-> virtual address through the PT_LOAD segments; 0 or -1. */
int instr_elf_vaddr_to_off(const struct instr_elf *e, uint64_t vaddr, uint64_t *off);
/* The load bias of a mapping of this file at `start` from file offset
 * `pgoff` (address - bias = the file's virtual address); 0 or -1. */
int instr_elf_bias(const struct instr_elf *e, uint64_t start, uint64_t pgoff, uint64_t *bias);

/* Fills syms from .symtab, else .dynsym (STT_FUNC and STT_GNU_IFUNC,
 * defined).  0, or INSTR_ENOMEM. */
int instr_elf_load_symbols(struct instr_elf *e);
/* The function symbol containing vaddr, or NULL. */
const struct instr_elf_sym *instr_elf_symbol(const struct instr_elf *e, uint64_t vaddr);
int instr_elf_has_symtab(const struct instr_elf *e);

/* The build-id as lowercase hex into buf (len >= 41); 0 or -1. */
int instr_elf_build_id(const struct instr_elf *e, char *buf, size_t len);
/* The .gnu_debuglink file name (inside the mapping), or NULL. */
const char *instr_elf_debuglink(const struct instr_elf *e);

#endif
