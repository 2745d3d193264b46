/* pemc user-model plugin ABI, version 2 (version 1 plugins still load).
 *
 * A user model is a shared library (.so) exporting the C functions below. pemc loads it with
 * dlopen(RTLD_NOW | RTLD_LOCAL), checks that pemc_plugin_abi_version() is 1 or 2 and looks up
 * every required symbol of that version; a missing symbol, another ABI version, a failed create
 * or a dimension outside [1, 10^7] is a configuration error naming the library.
 *
 * Version 2 adds named outputs: the quantities a draw reports on the model's own scale (for a
 * Stan model: parameters, transformed parameters and generated quantities, constrained), while
 * sampling runs on the d unconstrained coordinates x. Stan models are wrapped by pemc's own
 * version-2 shim (src/stan_target/shim/); a hand-written plugin may use version 1 or 2.
 * pemc_model_lp_offset and pemc_model_parameter_output_count were added to version 2 as optional
 * functions, so version-2 plugins built before them load as they did (without what they give).
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
#include <stdint.h>

#define PEMC_PLUGIN_ABI_VERSION 2

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

/* The ABI version the plugin implements: 1, or 2 with the version-2 functions below. */
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
 * (e.g. outside the support). A finite potential with a non-finite gradient is also rejected.
 * A version-2 plugin may say why it rejected x: +inf with a message from pemc_model_last_error
 * (pemc counts the message, logs the first ones and keeps them in the chain's summary). */
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

/* ---- version 2: required when pemc_plugin_abi_version() returns 2 ---- */

/* Number of named outputs (>= 0; constant for the model's lifetime). */
PEMC_PLUGIN_EXPORT int pemc_model_output_count(const void* model);

/* Name of output i in [0, count), in Stan's form: "mu", "theta[1]", "Sigma[2,1]" (1-based, row
 * index first). The pointer stays valid for the model's lifetime. */
PEMC_PLUGIN_EXPORT const char* pemc_model_output_name(const void* model, int i);

/* Write the count outputs of the point x (d doubles) into out. `seed` keys any randomness the
 * outputs need (Stan's generated quantities): the same x and seed give the same outputs. Return 0
 * on success. Otherwise write a NUL-terminated message of at most error_len bytes into `error` and
 * return 1 (pemc records NaN for every output of that draw) or 2 (out holds the outputs computed
 * before the failure and NaN for the rest, which pemc records as they are, as Stan does when
 * generated quantities throw). pemc counts the failures and logs the first messages. */
PEMC_PLUGIN_EXPORT int pemc_model_write_outputs(void* model, const double* x, uint64_t seed,
                                                double* out, char* error, size_t error_len);

/* ---- version 2, optional ---- */

/* The potential alone (no gradient), where that is cheaper; same value as potential_gradient. */
PEMC_PLUGIN_EXPORT double pemc_model_potential(void* model, const double* x);

/* After potential_gradient or potential returned NaN: a NUL-terminated message saying why when
 * it was an error of the model rather than a rejection (e.g. an index out of range), else "" or
 * NULL. pemc ends the chain with that message; a NaN with no message is a rejected proposal.
 * After +inf: the reason for the rejection, or "" or NULL when there is none to give. */
PEMC_PLUGIN_EXPORT const char* pemc_model_last_error(const void* model);

/* For a model whose own tools report its log density without some constants (Stan's lp__:
 * log_prob with propto = true, the constants of `~` statements dropped, Jacobian included):
 * write -potential(x) minus that log density into *offset and return 0; return non-zero where x
 * is rejected or the model cannot say. The offset must not depend on x: pemc measures it at a few
 * points, records it in the run's header (RunInfo.lp_offset) and exports lp__ = -potential -
 * offset, so that lp__ is the one those tools report. Stan models only, through pemc's shim. */
PEMC_PLUGIN_EXPORT int pemc_model_lp_offset(void* model, const double* x, double* offset);

/* How many of the outputs, from the first, are the model's parameters (for Stan: parameters and
 * transformed parameters), in [0, output_count]; the rest are derived quantities (Stan's generated
 * quantities). pemc records it in the run's header (RunInfo.n_parameter_outputs); reports list
 * the parameters first. */
PEMC_PLUGIN_EXPORT int pemc_model_parameter_output_count(const void* model);

/* Function-pointer types pemc uses after dlsym. */
typedef int (*pemc_plugin_abi_version_fn)(void);
typedef void* (*pemc_model_create_fn)(const char*, char*, size_t);
typedef void (*pemc_model_destroy_fn)(void*);
typedef int (*pemc_model_dim_fn)(const void*);
typedef double (*pemc_model_potential_gradient_fn)(void*, const double*, double*);
typedef int (*pemc_model_initial_point_fn)(void*, double*);
typedef int (*pemc_model_truth_fn)(void*, double*, double*, double*);
typedef int (*pemc_model_output_count_fn)(const void*);
typedef const char* (*pemc_model_output_name_fn)(const void*, int);
typedef int (*pemc_model_write_outputs_fn)(void*, const double*, uint64_t, double*, char*, size_t);
typedef double (*pemc_model_potential_fn)(void*, const double*);
typedef const char* (*pemc_model_last_error_fn)(const void*);
typedef int (*pemc_model_lp_offset_fn)(void*, const double*, double*);
typedef int (*pemc_model_parameter_output_count_fn)(const void*);

#ifdef __cplusplus
}
#endif

#endif /* PEMC_PLUGIN_ABI_H */
