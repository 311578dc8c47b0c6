/* mpi-abi.h - the contract between libinstr-mpi (mpi/instr-mpi.c, the
 * optional PMPI wrappers) and the runtime (runtime/mpi.c).
 *
 * The runtime links no MPI.  The wrapper library finds the runtime the
 * program already loaded (the object named INSTR_RUNTIME_SONAME among the
 * loaded ones, opened again with RTLD_NOLOAD) and asks it for this table
 * by INSTR_MPI_API_SYMBOL; a program that was not built with the plugin
 * has no runtime loaded, and its MPI calls merely pass through.
 */
#ifndef INSTR_MPI_ABI_H
#define INSTR_MPI_ABI_H

#include <stdint.h>

#include "dump-format.h"

#define INSTR_MPI_API_SYMBOL "instr__mpi_api"
#define INSTR_MPI_API_VERSION 4u /* 2: fields up to COMM_ID; 3: up to RANK; 4: up to BEGAN */
#define INSTR_MPI_ABSENT INT64_MIN /* a field the call does not have */

struct instr_mpi_api {
    uint32_t version; /* INSTR_MPI_API_VERSION */
    /* The runtime's ticks now (the dump's tick_source). */
    uint64_t (*tick)(void);
    /* Records on the calling thread an MPI call (INSTR_MPI_*) that began at
     * start (ticks) and ends now; fields[f] for f in 1..INSTR_MPI_FIELD_MAX
     * (fields[0] unused), INSTR_MPI_ABSENT where the call has none. */
    void (*record)(unsigned call, uint64_t start, const int64_t *fields);
    /* MPI_Pcontrol(level): 0 switches recording off, any other level on. */
    void (*pcontrol)(int level);
    /* Whether the recording switch is off (MPI calls are then not recorded). */
    int (*off)(void);
};

#endif
