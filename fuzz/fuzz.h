/* fuzz.h — what the libFuzzer harnesses share: a scratch folder, files in it, a PRNG. */
#ifndef OM_FUZZ_H
#define OM_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "omopt.h"

/** The harness entry point (libFuzzer's, or replay.c's main calls it for each file). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/** The process's scratch folder, made on first use and removed at exit. It holds
 *  FZ_WEIGHTS_NAME (FZ_WEIGHTS_BYTES of a fixed pattern), the file the seed models' external
 *  data refers to, so that models loaded with this folder as their `dir` map real bytes. */
const char *fz_dir(void);
#define FZ_WEIGHTS_NAME "weights.bin"
#define FZ_WEIGHTS_BYTES 4096

/** Writes size bytes to fz_dir()/name (replacing it); returns the path in a static buffer,
 *  or NULL when the write failed. */
const char *fz_write(const char *name, const uint8_t *data, size_t size);

/** FNV-1a of the bytes: a seed for the choices a harness makes from its input. */
uint64_t fz_hash(const uint8_t *data, size_t size);
/** splitmix64 step. */
uint64_t fz_next(uint64_t *state);

/** Stops the process with a message (a finding: libFuzzer saves the input) when a call
 *  reports OM_ERR_INTERNAL, which omopt's header reserves for its own bugs. With
 *  OMOPT_FUZZ_VERBOSE set in the environment, prints every call's outcome. */
void fz_check_kind(om_kind k, const om_status *st, const char *what);
/** The model in data (external data from fz_dir()), or NULL when omopt refuses it; a finding
 *  when loading reports OM_ERR_INTERNAL or its kind disagrees with the model it returns. */
om_model *fz_load(const uint8_t *data, size_t size);
/** Stops the process with a message (a finding). */
void fz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
