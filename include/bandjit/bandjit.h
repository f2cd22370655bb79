/* bandjit.h — the stable C ABI of bandjit (plain C89-compatible declarations).
 *
 * Opaque handles, status codes and a per-thread message getter over the C++ API
 * (bandjit/bandjit.hpp): problem validation, get_kernel + launch, pregenerate and the cache.
 * Problems travel as JSON text in the shape-file form of SPEC §2/§6, e.g.
 *   {"batch":1,"heads":12,"seq_len":4096,"head_dim":64,"window_left":256,
 *    "window_right":256,"dtype":"float16"}
 * Every function returns BANDJIT_OK or an error status; after an error,
 * bandjit_last_error() returns its message (field, value and allowed range for a bad
 * problem; the CUDA or NVRTC evidence otherwise), valid until the next call on that thread.
 * No function throws; all are thread-safe.
 */
#ifndef BANDJIT_H
#define BANDJIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes: the same numbers as the command line's exit codes (docs/cli.md). */
typedef enum bandjit_status {
  BANDJIT_OK = 0,
  BANDJIT_ERROR_INTERNAL = 1,        /* an unexpected failure (a bug) */
  BANDJIT_ERROR_USAGE = 2,           /* wrong use: null or misaligned pointer, wrong count, batch */
  BANDJIT_ERROR_INVALID_PROBLEM = 3, /* a problem field out of range, bad JSON, unknown family */
  BANDJIT_ERROR_COMPILE_FAILED = 4,  /* NVRTC rejected the generated source */
  BANDJIT_ERROR_DRIVER_FAILED = 5,   /* a CUDA Driver API call failed, or no GPU/driver */
  BANDJIT_ERROR_IO = 6               /* the cache directory or a file could not be used */
} bandjit_status;

/* A loaded kernel: from bandjit_get_kernel, released with bandjit_kernel_free. */
typedef struct bandjit_kernel bandjit_kernel;

/* Message of this thread's last failed call ("" when none). */
const char* bandjit_last_error(void);

/* Library version, e.g. "0.1.0". */
const char* bandjit_version(void);

/* Checks a problem (JSON text) without building anything. JSON that repeats a key in one
 * object or nests more than 64 levels deep is BANDJIT_ERROR_INVALID_PROBLEM. */
bandjit_status bandjit_validate_problem(const char* problem_json);

/* Checks the parameters (JSON text) of any family by name: the band families take the
 * problem of SPEC §2, the others the parameters bandjit_families_json lists. */
bandjit_status bandjit_validate_parameters(const char* family, const char* parameters_json);

/* Every family as JSON, as `bandjit families --json` prints it: [{name, parameter_set,
 * summary, reference, arguments, parameters: [{name, type, allowed, default (null when
 * required), doc}]}]; buffer, capacity and needed as for bandjit_kernel_info_json. */
bandjit_status bandjit_families_json(char* buffer, size_t capacity, size_t* needed);

/* problem_json below: the family's parameters — for the band families the problem of SPEC §2.
 * Makes sure the disk cache holds the kernel of `family` ("band_qk", ...) for the problem.
 * arch: "sm_90" etc., or NULL for the current GPU's (then a GPU is needed). cache_dir: NULL
 * for the default ($BANDJIT_CACHE_DIR, ...). *compiled (may be NULL) = 1 if NVRTC ran. */
bandjit_status bandjit_pregenerate(const char* family, const char* problem_json, const char* arch,
                                   const char* cache_dir, int* compiled);

/* The kernel of `family` for the problem on the current CUDA context's device (retains the
 * primary context of device 0 when none is current): from memory, the disk cache or NVRTC. */
bandjit_status bandjit_get_kernel(const char* family, const char* problem_json, const char* cache_dir,
                                  bandjit_kernel** kernel);

/* Launches on `stream` (a CUstream / cudaStream_t, NULL = default stream). pointers: the
 * device addresses named by the kernel's arguments (see bandjit_kernel_info_json), count
 * of them. batch: 0 = the problem's own (families other than the band's take only 0);
 * other values only for band problems with "runtime_batch": true. Same checks and errors as bandjit::Kernel::launch. */
bandjit_status bandjit_kernel_launch(const bandjit_kernel* kernel, void* stream, const uint64_t* pointers,
                                     size_t count, int64_t batch);

/* The kernel's description as JSON (family, kernel_name, arguments, grid, block,
 * shared_bytes, registers, arch, key_hash, origin). Copies at most `capacity` bytes
 * including the terminating 0 into `buffer` (may be NULL when capacity is 0) and sets
 * *needed (may be NULL) to the full size; BANDJIT_ERROR_USAGE if it did not fit. */
bandjit_status bandjit_kernel_info_json(const bandjit_kernel* kernel, char* buffer, size_t capacity, size_t* needed);

void bandjit_kernel_free(bandjit_kernel* kernel);

/* Summary of a cache directory (NULL = default) as JSON: dir, entries, bytes, max_bytes,
 * invalid, temp_files. Buffer rules as bandjit_kernel_info_json. BANDJIT_ERROR_IO when the
 * directory (or a shard of it) cannot be listed; one that does not exist is empty. */
bandjit_status bandjit_cache_summary_json(const char* cache_dir, char* buffer, size_t capacity, size_t* needed);

#ifdef __cplusplus
}
#endif

#endif /* BANDJIT_H */
