/* pemc user-model plugin ABI, version 1.
 *
 * A user model is a shared library (.so) exporting the C functions below. pemc loads it with
 * dlopen(RTLD_NOW | RTLD_LOCAL), checks pemc_plugin_abi_version() == PEMC_PLUGIN_ABI_VERSION and
 * looks up every required symbol; a missing symbol, another ABI version, a failed create or a
 * dimension outside [1, 10^7] is a configuration error naming the library.
 *
 * Lifetime and threads: pemc calls pemc_model_create once per target instance (one per process,
 * or per thread if several threads sample), uses the returned model from that one thread only,
 * and calls pemc_model_destroy exactly once. Different model instances may live in different
 * threads at the same time, so a plugin must not keep mutable global state.
 *
 * Errors: functions must not throw C++ exceptions or call exit(); a plugin written in C++ must
 * catch everything at this boundary.
 *
 * Build, e.g.:  cc -O2 -shared -fPIC -o libmymodel.so mymodel.c
 * (see src/targets/examples/example_plugin.c for a complete model).
 */
#ifndef PEMC_PLUGIN_ABI_H
#define PEMC_PLUGIN_ABI_H

#include <stddef.h>

#define PEMC_PLUGIN_ABI_VERSION 1

/* Mark the entry points visible even when the plugin is compiled with -fvisibility=hidden. */
#if defined(__GNUC__)
#define PEMC_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define PEMC_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- required ---- */

/* Must return PEMC_PLUGIN_ABI_VERSION as seen when the plugin was compiled. */
PEMC_PLUGIN_EXPORT int pemc_plugin_abi_version(void);

/* Create a model from the config's `argument` string (never NULL; may be empty). On failure
 * return NULL and write a NUL-terminated message of at most error_len bytes into `error`. */
PEMC_PLUGIN_EXPORT void* pemc_model_create(const char* argument, char* error, size_t error_len);

/* Release everything pemc_model_create allocated. Called exactly once per model. */
PEMC_PLUGIN_EXPORT void pemc_model_destroy(void* model);

/* Dimension d of the state, in [1, 10^7]; constant for the model's lifetime. */
PEMC_PLUGIN_EXPORT int pemc_model_dim(const void* model);

/* Return the potential -log density(x) + const at x (d doubles) and write its gradient
 * d potential / dx into grad (d doubles). May return NaN or +inf: the proposal is then rejected
 * (e.g. outside the support). A finite potential with a non-finite gradient is also rejected. */
PEMC_PLUGIN_EXPORT double pemc_model_potential_gradient(void* model, const double* x, double* grad);

/* ---- optional (pemc checks whether they are exported) ---- */

/* Write a sensible initial point (d doubles) into x; return 0 on success, non-zero if none. */
PEMC_PLUGIN_EXPORT int pemc_model_initial_point(void* model, double* x);

/* Exact quantities where known, for tests and reports. pemc pre-fills every entry with NaN;
 * write what is known: mean (d doubles, E[x]), second_moment (d doubles, E[x_i^2]) and *log_z
 * (log of the integral of exp(-potential)). A vector counts as known only if all its d entries
 * are finite. Return 0 on success, non-zero if nothing is known. */
PEMC_PLUGIN_EXPORT int pemc_model_truth(void* model, double* mean, double* second_moment,
                                        double* log_z);

/* Function-pointer types pemc uses after dlsym. */
typedef int (*pemc_plugin_abi_version_fn)(void);
typedef void* (*pemc_model_create_fn)(const char*, char*, size_t);
typedef void (*pemc_model_destroy_fn)(void*);
typedef int (*pemc_model_dim_fn)(const void*);
typedef double (*pemc_model_potential_gradient_fn)(void*, const double*, double*);
typedef int (*pemc_model_initial_point_fn)(void*, double*);
typedef int (*pemc_model_truth_fn)(void*, double*, double*, double*);

#ifdef __cplusplus
}
#endif

#endif /* PEMC_PLUGIN_ABI_H */
