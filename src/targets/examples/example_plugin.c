/* Example pemc user model (C ABI of src/targets/plugin_abi.h): an anisotropic Gaussian
 *   x_i ~ N(m_i, s_i^2) independently,  m_i = (i mod 3) - 1,  s_i = 2^((i mod 4) - 1),
 * i = 0..d-1, potential = sum_i (x_i - m_i)^2 / (2 s_i^2) (no constants), so
 * log_z = d/2 log(2 pi) + sum_i log s_i, E[x_i] = m_i, E[x_i^2] = m_i^2 + s_i^2.
 * The scales are powers of two so that log s_i = ((i mod 4) - 1) log 2 and the library needs no
 * libm (the CMake target links nothing).
 *
 * Argument: comma- or space-separated tokens
 *   dim=N   the dimension (default 2). Passed through unchecked, so dim=0 or a huge value
 *           exercises pemc's dimension checks (m_i, s_i are computed, never stored).
 *   fail    pemc_model_create fails with a message (exercises pemc's error path).
 * Build: cc -O2 -shared -fPIC -I src/targets -o libpemc_example_plugin.so example_plugin.c
 * (CMake target pemc_example_plugin).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_abi.h"

typedef struct {
  int dim;
} ExampleModel;

static double mean_of(int i) { return (double)(i % 3) - 1.0; }
static double sd_of(int i) {
  static const double kScales[4] = {0.5, 1.0, 2.0, 4.0};
  return kScales[i % 4];
}
static double log_sd_of(int i) { return (double)(i % 4 - 1) * 0.69314718055994530942; }

PEMC_PLUGIN_EXPORT int pemc_plugin_abi_version(void) { return 1; } /* a version-1 model */

/* Parses one token; returns 0 on success, else writes a message. */
static int parse_token(const char* tok, size_t len, ExampleModel* m, int* fail, char* error,
                       size_t error_len) {
  if (len == 4 && strncmp(tok, "fail", 4) == 0) {
    *fail = 1;
    return 0;
  }
  if (len > 4 && strncmp(tok, "dim=", 4) == 0) {
    char buf[32];
    size_t n = len - 4;
    if (n >= sizeof buf) n = sizeof buf - 1;
    memcpy(buf, tok + 4, n);
    buf[n] = '\0';
    char* end = NULL;
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (errno != 0 || end == buf || *end != '\0' || v < INT_MIN || v > INT_MAX) {
      snprintf(error, error_len, "example plugin: bad dim value '%s'", buf);
      return 1;
    }
    m->dim = (int)v;
    return 0;
  }
  snprintf(error, error_len,
           "example plugin: unknown argument token '%.*s' (expected dim=N or fail)", (int)len, tok);
  return 1;
}

PEMC_PLUGIN_EXPORT void* pemc_model_create(const char* argument, char* error, size_t error_len) {
  ExampleModel parsed = {2};
  int fail = 0;
  const char* p = argument != NULL ? argument : "";
  while (*p != '\0') {
    while (*p == ',' || *p == ' ') ++p;
    const char* start = p;
    while (*p != '\0' && *p != ',' && *p != ' ') ++p;
    if (p > start && parse_token(start, (size_t)(p - start), &parsed, &fail, error, error_len) != 0)
      return NULL;
  }
  if (fail) {
    snprintf(error, error_len, "example plugin: asked to fail by the argument \"%s\"", argument);
    return NULL;
  }
  ExampleModel* m = (ExampleModel*)malloc(sizeof *m);
  if (m == NULL) {
    snprintf(error, error_len, "example plugin: out of memory");
    return NULL;
  }
  *m = parsed;
  return m;
}

PEMC_PLUGIN_EXPORT void pemc_model_destroy(void* model) { free(model); }

PEMC_PLUGIN_EXPORT int pemc_model_dim(const void* model) {
  return ((const ExampleModel*)model)->dim;
}

PEMC_PLUGIN_EXPORT double pemc_model_potential_gradient(void* model, const double* x,
                                                        double* grad) {
  const ExampleModel* m = (const ExampleModel*)model;
  double u = 0.0;
  for (int i = 0; i < m->dim; ++i) {
    const double s = sd_of(i);
    const double z = (x[i] - mean_of(i)) / s;
    u += 0.5 * z * z;
    grad[i] = z / s;
  }
  return u; /* NaN in x propagates to a NaN potential: a rejection */
}

PEMC_PLUGIN_EXPORT int pemc_model_initial_point(void* model, double* x) {
  const ExampleModel* m = (const ExampleModel*)model;
  for (int i = 0; i < m->dim; ++i) x[i] = mean_of(i);
  return 0;
}

PEMC_PLUGIN_EXPORT int pemc_model_truth(void* model, double* mean, double* second_moment,
                                        double* log_z) {
  const ExampleModel* m = (const ExampleModel*)model;
  double lz = 0.5 * (double)m->dim * 1.83787706640934548356; /* log(2 pi) */
  for (int i = 0; i < m->dim; ++i) {
    const double mu = mean_of(i);
    const double s = sd_of(i);
    mean[i] = mu;
    second_moment[i] = mu * mu + s * s;
    lz += log_sd_of(i);
  }
  *log_z = lz;
  return 0;
}
