/* hook-abi.h - the contract between the GCC plugin and the runtime.
 *
 * The plugin emits, per instrumented function, a writable static byte array
 * (the function's descriptor) and calls the hooks below with its address.
 * Descriptor layout (8-byte aligned):
 *
 *   offset 0   u32  id       0 until the runtime registers the function
 *   offset 4   u8   abi      INSTR_HOOK_ABI_VERSION
 *   offset 5   u8   flags    INSTR_FN_* bits
 *   offset 6   u16  rt_flags 0 in the object; the runtime's own (INSTR_FN_RT_*)
 *   offset 8   "mangled-name\0source-file\0decimal-line\0"
 *              then, with flag INSTR_FN_DEMANGLED, "demangled-name\0"
 *
 * Hooks take the descriptor and the function's CFA (__builtin_dwarf_cfa():
 * the caller's stack pointer before the call), which lets the runtime tell
 * live frames from frames that an exception or longjmp has left.  Inlined
 * copies of an instrumented function (when instrumenting before inlining)
 * share their host's CFA.
 *
 * Binding: the plugin adds to every object, in one COMDAT group so that each
 * module (executable or shared library) keeps exactly one copy,
 *   - hidden trampolines __instr_enter/__instr_exit/__instr_landing, each an
 *     indirect jump through the module's hidden table __instr_hook_table;
 *   - hidden trampolines __instr_call/__instr_return for the call-site hooks
 *     (slots INSTR_SLOT_CALL/INSTR_SLOT_RETURN, same shape);
 *   - hidden weak trampolines instr_event/instr_counter, the public API of
 *     include/instr/instr.h (slots INSTR_SLOT_EVENT/INSTR_SLOT_COUNTER), so
 *     code built with the plugin needs no link flag for them either;
 *     instr_start/instr_stop the same way (slots INSTR_SLOT_START/STOP);
 *   - a hidden trampoline __instr_ending (slot INSTR_SLOT_ENDING), called
 *     with the status right before a call of _exit, _Exit or quick_exit,
 *     which run no exit handler (a module bound with fewer slots, from an
 *     older plugin, simply has none);
 *   - the table, initialised to a hidden no-op (__instr_nop), so code that
 *     runs before binding, or when the runtime cannot be loaded, is merely
 *     not recorded;
 *   - a constructor (.init_array, priority INSTR_BIND_PRIORITY) that
 *     dlopen()s the runtime by the absolute path fixed at compile time
 *     (libinstr-rt.so next to the plugin, or -fplugin-arg-instr-runtime=PATH)
 *     and calls its INSTR_BIND_SYMBOL with the table;
 *   - __instr_bind_late (INSTR_BIND_LATE_HOOK), called first in an
 *     instrumented main: the same binding, when the constructor deferred it.
 *
 * Deferred binding.  A program that defines malloc, calloc, realloc or
 * free itself has them called by the dynamic linker while dlopen() loads
 * the runtime; a wrapper that reaches libc's through a pointer set in its
 * own constructor is then called before that constructor ran (the binding
 * runs first) and crashes.  So in a module whose main is instrumented
 * (the unit of main defines INSTR_MAIN_HERE; the group holds a weak
 * reference to it, 0 elsewhere) the constructor first compares, for each
 * of the four, dlsym (RTLD_DEFAULT) with dlsym (RTLD_NEXT): a module that
 * defines one gets two addresses (a shared allocator such as
 * libtcmalloc.so gives the same one both ways: it is ready before any
 * constructor of the program).  If one differs, the constructor only sets
 * a module-local byte; main's first statement, __instr_bind_late, clears
 * it and binds, passing INSTR_BIND_LATE in bind's abi argument so that the
 * runtime says in the dump that recording began at main, then sends the
 * units' threshold records (INSTR_UNIT_SECTION).  Each dlsym
 * there finds its symbol (libc has all four): a failing dlsym would
 * allocate its error message, to be freed later through the program's
 * free.
 *
 * Call sites (ABI 2).  Around each call statement of an instrumented
 * function (plugin argument callsites=all|external|none) the plugin emits
 *
 *   __instr_call (&site, cfa, target);   target: the callee address of an
 *   CALL STATEMENT                               indirect call, else NULL
 *   __instr_return (&site, cfa);         on the normal way out of the call
 *
 * with cfa the calling function's CFA.  A call that is left by an exception
 * has no __instr_return: the landing hook of the frame that catches (or
 * cleans up) closes the call-site frame with the other frames the exception
 * left, as an exception exit (EXT UNWIND exception).  That is the defined
 * way for exceptions to close frames, not a repair of a broken stream; the
 * same holds for a call a longjmp leaves (closed when the jump lands).
 *
 * Site descriptor layout (struct instr_site_desc, 8-byte aligned, writable):
 *
 *   offset 0   u32  id        0 until the runtime registers the site
 *   offset 4   u8   abi       INSTR_HOOK_ABI_VERSION
 *   offset 5   u8   flags     INSTR_SITE_* bits
 *   offset 6   u16  reserved  0
 *   offset 8   u32  line      source line of the call
 *   offset 12  u32  reserved  0
 *   offset 16  ptr  caller    the calling function's descriptor
 *   offset 24  ptr  callee    "mangled-name\0" of a direct callee, NULL if indirect
 *   offset 32  u64  target    runtime cache: the last indirect target seen and
 *                             its id (the runtime's packing), 0 at first
 *   offset 40  u64  reserved  0
 */
#ifndef INSTR_HOOK_ABI_H
#define INSTR_HOOK_ABI_H

#include <stdint.h>

#define INSTR_HOOK_ABI_VERSION 2u
#define INSTR_FN_DESC_NAMES_OFFSET 8u

/* Descriptor flags. */
#define INSTR_FN_SHARES_CFA 0x01u /* hooks may be inlined into a caller (inline=before), so a
                                     frame with the same CFA can be a live ancestor */
#define INSTR_FN_DEMANGLED 0x02u  /* a fourth string follows: the demangled name (C++ only) */
#define INSTR_FN_SWITCHABLE 0x04u /* compiled switchable: the recording switch turns its hooks off
                                     (runtime/switch.c); without it, the hooks' slow path does */

/* Runtime flags (rt_flags), set when the function registers (it is an
 * INSTR_TRIGGER function: runtime/filter.c) or cannot (no room). */
#define INSTR_FN_RT_TRIGGER_ON 0x01u  /* entering it switches recording on */
#define INSTR_FN_RT_TRIGGER_OFF 0x02u /* its return switches recording off */
#define INSTR_FN_RT_NO_ROOM 0x04u     /* its registration failed (metadata.c): its exits are no mismatch */

/* Names spelled once, used by the plugin (emitted calls) and the runtime. */
#define INSTR_HOOK_ENTER "__instr_enter"
#define INSTR_HOOK_EXIT "__instr_exit"
#define INSTR_HOOK_LANDING "__instr_landing"
#define INSTR_HOOK_CALL "__instr_call"
#define INSTR_HOOK_RETURN "__instr_return"
#define INSTR_HOOK_TABLE "__instr_hook_table"
#define INSTR_HOOK_NOP "__instr_nop"
#define INSTR_API_EVENT "instr_event"     /* public API trampolines (include/instr/instr.h) */
#define INSTR_API_COUNTER "instr_counter"
#define INSTR_API_START "instr_start" /* switchable= (plugin/pass-switch.cc) */
#define INSTR_API_STOP "instr_stop"
#define INSTR_SWITCH_ON "__instr_on"  /* the hook table's INSTR_SLOT_ON, by name */
#define INSTR_HOOK_ENDING "__instr_ending" /* INSTR_SLOT_ENDING's trampoline */
#define INSTR_BIND_SYMBOL "instr__bind"
#define INSTR_BIND_LATE_HOOK "__instr_bind_late" /* the deferred binding, called first in main */
#define INSTR_MAIN_HERE "__instr_main_here"      /* defined in main's unit: main is instrumented */
#define INSTR_RUNTIME_SONAME "libinstr-rt.so"
#define INSTR_BIND_PRIORITY 100 /* the last reserved priority: before every user constructor */

/* Slots of __instr_hook_table, in order. */
enum instr_hook_slot {
    INSTR_SLOT_ENTER = 0,   /* void enter(struct instr_fn_desc *, void *cfa) */
    INSTR_SLOT_EXIT = 1,    /* void exit(struct instr_fn_desc *, void *cfa) */
    INSTR_SLOT_LANDING = 2, /* void landing(struct instr_fn_desc *, void *cfa): an EH landing pad of fn runs */
    INSTR_SLOT_CALL = 3,    /* void call(struct instr_site_desc *, void *cfa, void *target): before a call */
    INSTR_SLOT_RETURN = 4,  /* void ret(struct instr_site_desc *, void *cfa): after it returned */
    INSTR_SLOT_EVENT = 5,   /* void event(const char *label): instr_event() (include/instr/instr.h) */
    INSTR_SLOT_COUNTER = 6, /* void counter(const char *label, int32_t value): instr_counter() */
    INSTR_SLOT_UNIT = 7,    /* void unit(const struct instr_unit_desc *): a unit's threshold record */
    INSTR_SLOT_COUNT_THREAD = 8, /* void count_thread(const struct instr_count_module *, uintptr_t *delta):
                                    count mode, a thread's first count in a module (see below) */
    INSTR_SLOT_START = 9,   /* void start(void): instr_start() */
    INSTR_SLOT_STOP = 10,   /* void stop(void): instr_stop() */
    /* Not a function: 0 while hooks are switched off, 1 while on; read at
     * the entry of every function compiled switchable, which runs its
     * hooked copy when it is nonzero (plugin/pass-switch.cc).  0 until the
     * runtime binds the table: an unbound module runs its plain bodies. */
    INSTR_SLOT_ON = 11,
    INSTR_SLOT_COUNT_ARM = 12, /* void count_arm(const struct instr_count_module *, uint8_t *armed,
                                  uintptr_t tp): count mode's TLS cells, a thread's first count */
    INSTR_SLOT_ENDING = 13, /* void ending(long status): right before a call of _exit, _Exit or
                               quick_exit (noreturn: no call-site hooks), the process's end */
    INSTR_SLOT_COUNT = 14
};

struct instr_fn_desc {
    uint32_t id;
    uint8_t abi;
    uint8_t flags;
    uint16_t rt_flags; /* the runtime's, 0 in the object: INSTR_FN_RT_* (runtime/filter.c) */
    char names[]; /* "mangled\0file\0line\0" [+ "demangled\0"] */
};

/* Site flags. */
#define INSTR_SITE_INDIRECT 0x01u /* a call through a pointer (function pointer, virtual call) */
/* The call may put the thread in a seccomp sandbox (runtime/sandbox.c):
 * prctl (PR_SET_NO_NEW_PRIVS or PR_SET_SECCOMP), syscall (SYS_seccomp or
 * SYS_prctl with those), seccomp_load () of libseccomp.  The runtime stops
 * recording before the call runs; never written to the dump. */
#define INSTR_SITE_SANDBOX 0x02u
#define INSTR_SITE_SANDBOX_STRICT 0x04u /* ... maybe strict mode: the thread loses its TSC */

struct instr_site_desc {
    uint32_t id;        /* direct sites: the CALL event's id once registered; indirect: 0 */
    uint8_t abi;        /* INSTR_HOOK_ABI_VERSION */
    uint8_t flags;      /* INSTR_SITE_* */
    uint16_t reserved;
    uint32_t line;      /* source line of the call */
    uint32_t reserved2;
    struct instr_fn_desc *caller; /* the calling function */
    const char *callee; /* direct callee's mangled name, NULL if indirect */
    uint64_t target;    /* runtime: the last indirect target seen here, with its id */
    uint64_t reserved3;
};

/* Unit descriptor (threshold=N, ABI 2, slot INSTR_SLOT_UNIT).  Each
 * translation unit compiled with threshold=N > 0 carries one, read-only,
 * and a constructor of priority INSTR_UNIT_PRIORITY (after the binding's)
 * that passes it to the unit hook; an unbound table makes that a no-op.
 * The runtime turns it into a UNIT metadata record (dump-format.h), so the
 * report can say how many functions were left out and why. */
#define INSTR_UNIT_PRIORITY (INSTR_BIND_PRIORITY + 1)
/* The address of each unit's descriptor, also in this section: a late
 * binding (Deferred binding, above), made after those constructors ran,
 * sends them to the unit hook itself. */
#define INSTR_UNIT_SECTION "instr_units"
struct instr_unit_desc {
    uint8_t abi;          /* INSTR_HOOK_ABI_VERSION */
    uint8_t reserved[3];  /* 0 */
    uint32_t threshold;   /* the unit's threshold=N, statements */
    uint32_t left_out;    /* functions it left out */
    uint32_t instrumented; /* functions it instrumented */
    char file[];          /* the unit's main source file, NUL-terminated */
};

/* Count mode (-fplugin-arg-instr-mode=count, ABI 2): no hooks, no time.
 * Per instrumented function the plugin emits a u64 counter, and per call
 * site (callsites=) another, all in the module's section INSTR_COUNT_SECTION
 * (one 8-byte cell each), and for each counter a struct instr_count_rec in
 * section INSTR_COUNT_REC_SECTION saying what it counts.  The code added is
 *
 *   entry:      d = __instr_count_delta;            (initial-exec TLS, 0 at first)
 *               if (d == 0) { __instr_count_thread (); d = __instr_count_delta; }
 *               *(u64 *) ((char *) &fn_counter + d) += 1;
 *   each call:  *(u64 *) ((char *) &site_counter + d) += 1;  CALL
 *
 * so each thread increments its own copy of the module's counter section
 * (no atomic instruction, no cache line shared between threads): d is the
 * distance from the section to this thread's copy.  __instr_count_thread
 * (a trampoline of the count binding, COMDAT group __instr_count_binding,
 * next to the TLS variable and the module's struct instr_count_module)
 * calls slot INSTR_SLOT_COUNT_THREAD with the module and the address of
 * this thread's __instr_count_delta; the runtime allocates the copy and
 * sets the delta.  Unbound (no runtime) it leaves d at 0: the counts go to
 * the section itself.  The runtime sums the section and every copy when
 * the process ends and writes FN_CALLS and SITE_CALLS records
 * (dump-format.h).
 *
 * That is the form of code compiled -fPIC (a shared object, perhaps
 * dlopen'd).  Code for an executable counts into TLS cells instead, one
 * instruction a count and nothing held in a register:
 *
 *   entry:      [if fn can begin a thread: public or its address taken]
 *                 if (!__instr_count_armed) __instr_count_arm ();  (asm)
 *               fn_cell += 1;              (local-exec TLS: %fs:cell@tpoff;
 *                                           aarch64: from tpidr_el0, an
 *                                           ldxr/stxr loop)
 *   each call:  site_cell += 1;  CALL
 *
 * Their records (flag INSTR_COUNT_TLS) hold in counter the cell's offset
 * from the thread pointer (aarch64: as two words whose add-immediate
 * fields hold its low and high 12 bits; the runtime's arch-inline.h,
 * instr__count_tls_offset, reads either).  __instr_count_arm (COMDAT group
 * __instr_count_arm_binding, with the TLS byte __instr_count_armed) sets
 * the byte and calls slot INSTR_SLOT_COUNT_ARM with the module, the byte's
 * address and the thread pointer, keeping the general registers, the
 * flags and xmm0-15 (aarch64: x0-x18 and NZCV; the arming test keeps x30);
 * the runtime's entry for that slot keeps the rest of the extended state,
 * ymm and zmm included (runtime/arch/x86_64/count-arm.c: libc routines it
 * calls may run vzeroupper; aarch64's: q0-q31, FPCR and FPSR, or with
 * SVE z0-z31, p0-p15 and FFR whole);
 * a thread can only reach counted code through such a function, so the
 * runtime knows every thread that counted, adds its cells up when it ends
 * and reads those still running at exit.  Until the module's binding
 * constructor runs, the slot holds __instr_count_early, which sets the
 * byte back to 0 (the thread arms again once bound); from the constructor
 * on, an unbound slot is the no-op and the byte stays 1, so a program
 * whose runtime is missing pays the test only. */
#define INSTR_COUNT_SECTION "instr_cnt"
#define INSTR_COUNT_REC_SECTION "instr_crec"
#define INSTR_COUNT_DELTA "__instr_count_delta"
#define INSTR_COUNT_THREAD "__instr_count_thread"
#define INSTR_COUNT_MODULE "__instr_count_module"
#define INSTR_COUNT_ARMED "__instr_count_armed"
#define INSTR_COUNT_ARM "__instr_count_arm"
#define INSTR_COUNT_EARLY "__instr_count_early" /* the arming slot before binding */

#define INSTR_COUNT_SITE 0x1u     /* a call site's counter (else the function's entries) */
#define INSTR_COUNT_INDIRECT 0x2u /* the site calls through a pointer: callee is NULL */
#define INSTR_COUNT_TLS 0x4u      /* counter is the cell's offset from the thread pointer */

struct instr_count_rec {
    uint64_t *counter;        /* the cell in INSTR_COUNT_SECTION; INSTR_COUNT_TLS: its offset
                                 from the thread pointer (an integer) */
    struct instr_fn_desc *fn; /* the function (entries) or the calling function (site) */
    const char *callee;       /* site: the direct callee's mangled name; else NULL */
    uint32_t line;            /* site: source line of the call; else 0 */
    uint32_t flags;           /* INSTR_COUNT_* */
};

/* One per module, in the count binding: its two sections' bounds. */
struct instr_count_module {
    uint64_t *cells, *cells_end;                       /* __start_/__stop_instr_cnt */
    const struct instr_count_rec *recs, *recs_end;     /* __start_/__stop_instr_crec */
};

typedef void (*instr_hook_fn)(struct instr_fn_desc *fn, void *cfa);

/* The runtime's binding entry point: fills table[0..slots) with its hooks.
 * abi: INSTR_HOOK_ABI_VERSION in its low 8 bits, INSTR_BIND_* flags above
 * (older modules pass none; an older runtime refuses a flag it does not
 * know as it refuses an unknown version).  Returns 0, or -1 if abi is not
 * supported (the table is left alone). */
#define INSTR_BIND_ABI_MASK 0xffu
#define INSTR_BIND_LATE 0x100u /* bound from main (deferred binding above): nothing ran recorded before */
typedef int (*instr_bind_fn)(instr_hook_fn *table, unsigned slots, unsigned abi);

#ifdef __cplusplus
static_assert(sizeof(struct instr_site_desc) == 48, "site descriptor layout");
static_assert(sizeof(struct instr_unit_desc) == 16, "unit descriptor layout");
#else
_Static_assert(sizeof(struct instr_site_desc) == 48, "site descriptor layout");
_Static_assert(sizeof(struct instr_unit_desc) == 16, "unit descriptor layout");
#endif
#ifdef __cplusplus
static_assert(sizeof(struct instr_count_rec) == 32, "count record layout");
#else
_Static_assert(sizeof(struct instr_count_rec) == 32, "count record layout");
#endif

#endif
