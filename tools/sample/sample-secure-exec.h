/* sample-secure-exec.h - whether the kernel would take instr-sample's perf
 * events off PROGRAM at its exec (a set-user-ID program of another user,
 * an unreadable file): see sample-secure-exec.c. */
#ifndef INSTR_SAMPLE_SECURE_EXEC_H
#define INSTR_SAMPLE_SECURE_EXEC_H

#include <stddef.h>

/* 1 with why (a sentence naming the cause and the fix) if PROGRAM, looked
 * up as execvp would, cannot be sampled; 0 otherwise (also when it is not
 * found: the exec says so). */
int instr_ss_secure_exec(const char *prog, char *why, size_t size);

#endif
