/* instr/instr.h - the public API of instr: named events and counters, and
 * the run-time switch of switchable code.
 *
 * The one installed header.  Two calls, both cheap (no lock, no allocation
 * and no system call once a label has been seen), thread-safe, and safe to
 * call at any time: before main, in constructors and destructors, in
 * threads, after the dump has ended (then they are ignored):
 *
 *   instr_event("Frame Start");          a named instant on the calling thread
 *   instr_counter("queue depth", n);     a named counter takes a value
 *
 * Both are recorded in the calling thread's stream at the current tick.
 * They do not change the call stack: they only split the interval they fall
 * in (docs/data-values.md), so no value of the report changes.  Exports
 * that have a place for them carry them: the visualiser format (V/Y and
 * C/D lines), Chrome trace JSON (instant events and counter tracks).
 *
 * Labels.  A label is identified by its address first: the runtime keeps
 * the pointer it was given, so a label must be a string that stays alive
 * and unchanged while the program runs, such as a string literal (the same
 * text at two addresses is one label: texts are compared at first use).  Up
 * to 2048 distinct label addresses are looked up without a lock; more still
 * work, each call taking the runtime's metadata lock.
 *
 * Linking.  Nothing to link.  An object compiled with the instr plugin
 * carries the definitions (hidden weak trampolines in its module's binding,
 * common/hook-abi.h), which do nothing until the runtime is bound and
 * records.  In a module where nothing was compiled with the plugin there is
 * no definition: the declarations below are weak, and the inline wrappers
 * call only when the symbol is there, so such code builds, links and runs
 * unchanged, and records nothing.  Code compiled without the plugin but
 * linked into a module that has instrumented objects records normally.
 *
 * Calls to these functions are never call-site frames of the caller: the
 * plugin leaves them alone.
 *
 * Start and stop.  Code compiled with -fplugin-arg-instr-switchable can
 * have its hooks switched off while it runs; it then runs the same code as
 * an uninstrumented build, plus a load and a branch at each function entry
 * (docs/switchable.md):
 *
 *   instr_stop();                        functions entered from now on run unhooked
 *   instr_start();                       ... hooked again
 *
 * INSTR_START=off in the environment begins a run stopped.  A switch holds
 * for every switchable module of the process, on every thread, from each
 * thread's next function entry on; a function already running hooked
 * finishes hooked.  Code compiled without switchable always records.
 */
#ifndef INSTR_INSTR_H
#define INSTR_INSTR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The functions themselves (weak: possibly absent, see above).  Prefer the
 * wrappers, which the macros below make the default spelling. */
void instr_event(const char *label) __attribute__((weak, nothrow, no_instrument_function));
void instr_counter(const char *label, int32_t value) __attribute__((weak, nothrow, no_instrument_function));

void instr_start(void) __attribute__((weak, nothrow, no_instrument_function));
void instr_stop(void) __attribute__((weak, nothrow, no_instrument_function));

static inline __attribute__((always_inline, no_instrument_function)) void instr__event_call(const char *label)
{
    if (instr_event)
        instr_event(label);
}

static inline __attribute__((always_inline, no_instrument_function)) void instr__counter_call(const char *label,
                                                                                              int32_t value)
{
    if (instr_counter)
        instr_counter(label, value);
}

static inline __attribute__((always_inline, no_instrument_function)) void instr__start_call(void)
{
    if (instr_start)
        instr_start();
}

static inline __attribute__((always_inline, no_instrument_function)) void instr__stop_call(void)
{
    if (instr_stop)
        instr_stop();
}

#define instr_event(label) instr__event_call(label)
#define instr_start() instr__start_call()
#define instr_stop() instr__stop_call()
#define instr_counter(label, value) instr__counter_call(label, value)

#ifdef __cplusplus
}
#endif

#endif
