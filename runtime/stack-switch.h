/* stack-switch.h - PRIVATE: one shadow stack per stack a thread runs on
 * (stack-switch.c).  All of it runs in the hooks' slow paths. */
#ifndef INSTR_RT_STACK_SWITCH_H
#define INSTR_RT_STACK_SWITCH_H

#include "internal.h"

/* A hook at cfa, more than INSTR_RT_STACK_SPAN from the top frame: if cfa
 * lies on another stack, suspend the running shadow stack, resume the one
 * of that stack (or, entry: start an empty one) and write EXT STACK_SWITCH
 * at p (the interval's first event).  Returns the new end (p if nothing
 * changed); the caller makes room. */
uint8_t *instr__stack_switch(struct instr__thread *t, uint8_t *p, uintptr_t cfa, int entry,
                             uint64_t now, unsigned *bits);

/* Whether cfa lies on a stack this thread has run instrumented code on and
 * left suspended (its own: no need to ask foreign-task.c). */
int instr__stack_known(const struct instr__thread *t, uintptr_t cfa);

/* Whether this thread runs on its alternate signal stack (a system call). */
int instr__on_alt_stack(void);

/* At the thread's end. */
void instr__stacks_free(struct instr__thread *t);

#endif
