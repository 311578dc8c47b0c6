/* sample-symbols.h - names for sampled addresses.
 *
 * A PC of a sampling dump is placed in its module through the dump's MAP
 * records, turned into the module file's virtual address, and named from
 * the file's .symtab, else its .dynsym; when the file has no .symtab, the
 * debug file found by build-id (/usr/lib/debug/.build-id/xx/yyyy.debug) or
 * .gnu_debuglink (next to it, in .debug/, or under /usr/lib/debug) is
 * used.  ELF files are opened once; names are demangled once per symbol.
 * Library code: never prints or exits.
 */
#ifndef INSTR_SAMPLE_SYMBOLS_H
#define INSTR_SAMPLE_SYMBOLS_H

#include <stdint.h>

#include "dump-reader.h"

struct instr_symbolizer;

struct instr_frame_sym {
    const char *module; /* module path, or NULL (no mapping holds the address) */
    const char *name;   /* demangled function name, or NULL (no symbol) */
    uint64_t vaddr;     /* address in the module file's own numbering (0 if no module) */
};

/* Debug files are looked for under $INSTR_DEBUG_ROOT, else /usr/lib/debug. */
int instr_symbolizer_new(struct instr_symbolizer **sp);
void instr_symbolizer_free(struct instr_symbolizer *s);

/* Names addr (a PC, or a return address minus one) of dump d at time tick.
 * Strings live as long as s.  0, or INSTR_ENOMEM. */
int instr_symbolize(struct instr_symbolizer *s, const struct instr_dump *d, uint64_t addr, uint64_t tick,
                    struct instr_frame_sym *out);

#endif
