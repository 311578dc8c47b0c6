/* elf-file.h - just enough of an ELF file for sampling: its loadable
 * segments (a mapping's bias, the unwinder's file offsets) and sections
 * by name.  Symbols, DWARF and debug files are libdwfl's (dwfl-module.h).
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

struct instr_elf {
    const uint8_t *map; /* whole file, read-only */
    size_t size;
    struct instr_elf_seg *segs; /* PT_LOAD, in file order */
    size_t nsegs;
    const uint8_t *shdrs; /* section headers (inside map), or NULL */
    size_t nsh;
    const char *shstr; /* section name table */
    size_t shstr_len;
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


#endif
