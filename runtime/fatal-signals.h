/* fatal-signals.h - PRIVATE: the crash handlers that end a dump
 * (fatal-signals.c; instr__fatal_signals_init is in internal.h). */
#ifndef INSTR_RT_FATAL_SIGNALS_H
#define INSTR_RT_FATAL_SIGNALS_H

/* Whether a direct call to `callee` (mangled name, or NULL) asks about or
 * sets signal dispositions (sigaction, signal...). */
int instr__fatal_signals_api(const char *callee);

/* Put our crash handlers back to SIG_DFL, for good: the program handles
 * its own signals. */
void instr__fatal_signals_hide(void);

/* Our handlers reset themselves on delivery from now on: a sandbox that
 * may refuse sigaction is coming (sandbox.c). */
void instr__fatal_signals_oneshot(void);

#endif
