#pragma once
// The version-2 plugin ABI (src/targets/plugin_abi.h) for a Stan model.
//
// pemc's Stan builder (src/stan_target/model_builder.cpp) compiles one translation unit per model:
//   #include "<model>.hpp"            // stanc's C++: defines the type stan_model
//   #include "stan_target/shim/model_shim.hpp"
// into a shared library that pemc loads like any plugin. The state x is the model's unconstrained
// parameter vector; the potential is -log p(x) on that space, with the Jacobian of the constraining
// transforms (Stan's log_prob<propto, jacobian = true>). Outputs are what Stan writes per draw:
// parameters, transformed parameters and generated quantities on the constrained scale, named as
// in Stan ("theta[1]", "Sigma[2,1]"); pemc_model_parameter_output_count says how many of them
// are parameters and transformed parameters. pemc_model_lp_offset gives the constant between the
// sampled log density and Stan's lp__, so that exports write Stan's lp__.
//
// pemc_model_create's argument is two lines: "propto=0" or "propto=1", then the data file's path
// (empty: a model without data). propto=1 drops the constants of `~` statements, as Stan's
// sampler does; propto=0 keeps every term, so that the density integrates to p(data) and log Z
// estimates are log marginal likelihoods.
//
// Errors, as Stan's samplers treat them (stan/mcmc/hmc/hamiltonians/base_hamiltonian.hpp): any
// std::exception in the log density (a failed argument check, reject(), an ODE solver's "max
// number of iterations exceeded") rejects the point: the potential is +inf and
// pemc_model_last_error gives the message. Anything else thrown is an error of the model (NaN and
// the message: the chain fails). When write_array throws, the values it wrote before the throw
// (the parameters, at least) are kept and the rest are NaN, as Stan's writer does
// (stan/services/util/mcmc_writer.hpp). Models are used from one thread per process (pemc's
// ranks), so Stan's autodiff stack is the process's own (no STAN_THREADS).
#include <stan/io/empty_var_context.hpp>
#include <stan/model/log_prob_grad.hpp>
#include <stan/model/log_prob_propto.hpp>

#include <boost/random/additive_combine.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "stan_target/shim/json_data.hpp"
#include "targets/plugin_abi.h"

namespace pemc::stan_shim {

struct Model {
  std::unique_ptr<stan_model> model;
  bool propto = false;
  std::vector<std::string> names;  // Stan's form, 1-based
  int n_parameter_names = 0;       // the first names: parameters and transformed parameters
  std::vector<double> params;      // scratch: the unconstrained point
  std::vector<int> params_i;       // Stan models have no integer parameters; always empty
  std::vector<double> grad;
  std::vector<double> vars;        // write_array's output
  std::string last_error;
};

// stanc's constrained_param_names writes "Sigma.2.1"; Stan's interfaces show "Sigma[2,1]".
inline std::string bracket_name(const std::string& dotted) {
  const auto dot = dotted.find('.');
  if (dot == std::string::npos) return dotted;
  std::string out = dotted.substr(0, dot) + "[";
  for (std::size_t i = dot + 1; i < dotted.size(); ++i) out += dotted[i] == '.' ? ',' : dotted[i];
  return out + "]";
}

inline void copy_message(const std::string& message, char* error, size_t error_len) {
  if (error == nullptr || error_len == 0) return;
  std::snprintf(error, error_len, "%s", message.c_str());
}

// The two seeds of Stan's own generator (boost::ecuyer1988, two combined LCGs) from one 64-bit
// key; each must lie in its LCG's range [1, modulus - 1].
inline boost::ecuyer1988 make_rng(std::uint64_t seed) {
  const auto s1 = static_cast<std::uint32_t>((seed & 0xffffffffu) % 2147483562u) + 1u;
  const auto s2 = static_cast<std::uint32_t>((seed >> 32) % 2147483398u) + 1u;
  return boost::ecuyer1988(s1, s2);
}

inline Model* create(const char* argument, char* error, size_t error_len) {
  const std::string arg = argument != nullptr ? argument : "";
  const auto newline = arg.find('\n');
  const std::string flag = arg.substr(0, newline);
  const std::string data_file = newline == std::string::npos ? "" : arg.substr(newline + 1);
  if (flag != "propto=0" && flag != "propto=1") {
    copy_message("the argument must start with a line propto=0 or propto=1, got '" + flag + "'",
                 error, error_len);
    return nullptr;
  }
  auto m = std::make_unique<Model>();
  m->propto = flag == "propto=1";
  std::ostringstream messages;
  try {
    if (data_file.empty()) {
      stan::io::empty_var_context none;
      m->model = std::make_unique<stan_model>(none, 0u, &messages);
    } else {
      JsonData data = read_json_data(data_file);
      m->model = std::make_unique<stan_model>(data, 0u, &messages);
    }
  } catch (const std::exception& e) {
    std::string what = e.what();
    if (!messages.str().empty()) what += " (" + messages.str() + ")";
    copy_message(what, error, error_len);
    return nullptr;
  }
  const auto d = m->model->num_params_r();
  if (d == 0) {
    copy_message("the model has no parameters to sample (its parameters block is empty)", error,
                 error_len);
    return nullptr;
  }
  std::vector<std::string> dotted;
  m->model->constrained_param_names(dotted, true, false);
  m->n_parameter_names = static_cast<int>(dotted.size());
  dotted.clear();
  m->model->constrained_param_names(dotted, true, true);
  m->names.reserve(dotted.size());
  for (const auto& name : dotted) m->names.push_back(bracket_name(name));
  m->params.resize(d);
  m->grad.resize(d);
  return m.release();
}

}  // namespace pemc::stan_shim

extern "C" {

PEMC_PLUGIN_EXPORT int pemc_plugin_abi_version(void) { return 2; }

PEMC_PLUGIN_EXPORT void* pemc_model_create(const char* argument, char* error, size_t error_len) {
  try {
    return pemc::stan_shim::create(argument, error, error_len);
  } catch (const std::exception& e) {
    pemc::stan_shim::copy_message(e.what(), error, error_len);
  } catch (...) {
    pemc::stan_shim::copy_message("unknown exception while creating the model", error, error_len);
  }
  return nullptr;
}

PEMC_PLUGIN_EXPORT void pemc_model_destroy(void* model) {
  delete static_cast<pemc::stan_shim::Model*>(model);
}

PEMC_PLUGIN_EXPORT int pemc_model_dim(const void* model) {
  return static_cast<int>(static_cast<const pemc::stan_shim::Model*>(model)->params.size());
}

PEMC_PLUGIN_EXPORT double pemc_model_potential_gradient(void* model, const double* x,
                                                        double* grad) {
  auto& m = *static_cast<pemc::stan_shim::Model*>(model);
  m.last_error.clear();
  const std::size_t d = m.params.size();
  std::copy(x, x + d, m.params.begin());
  try {
    const double lp =
        m.propto ? stan::model::log_prob_grad<true, true>(*m.model, m.params, m.params_i, m.grad)
                 : stan::model::log_prob_grad<false, true>(*m.model, m.params, m.params_i, m.grad);
    for (std::size_t i = 0; i < d; ++i) grad[i] = -m.grad[i];
    return -lp;
  } catch (const std::exception& e) {
    m.last_error = e.what();
    return std::numeric_limits<double>::infinity();  // Stan rejects the proposal
  } catch (...) {
    m.last_error = "unknown exception in the log density";
  }
  return std::numeric_limits<double>::quiet_NaN();
}

PEMC_PLUGIN_EXPORT double pemc_model_potential(void* model, const double* x) {
  auto& m = *static_cast<pemc::stan_shim::Model*>(model);
  m.last_error.clear();
  std::copy(x, x + m.params.size(), m.params.begin());
  try {
    // Dropping constants needs autodiff types (log_prob_propto); the full density does not.
    const double lp =
        m.propto ? stan::model::log_prob_propto<true>(*m.model, m.params, m.params_i)
                 : m.model->template log_prob<false, true>(m.params, m.params_i);
    return -lp;
  } catch (const std::exception& e) {
    m.last_error = e.what();
    return std::numeric_limits<double>::infinity();
  } catch (...) {
    m.last_error = "unknown exception in the log density";
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// The sampled log density (propto as configured) minus Stan's lp__ (propto = true), both with the
// Jacobian: the constants of `~` statements when propto=0, and 0 when propto=1.
PEMC_PLUGIN_EXPORT int pemc_model_lp_offset(void* model, const double* x, double* offset) {
  auto& m = *static_cast<pemc::stan_shim::Model*>(model);
  std::copy(x, x + m.params.size(), m.params.begin());
  try {
    const double stan_lp = stan::model::log_prob_propto<true>(*m.model, m.params, m.params_i);
    const double sampled =
        m.propto ? stan_lp : m.model->template log_prob<false, true>(m.params, m.params_i);
    if (!std::isfinite(stan_lp) || !std::isfinite(sampled)) return 1;
    *offset = sampled - stan_lp;
    return 0;
  } catch (...) {
    return 1;  // x is rejected: pemc tries another point
  }
}

PEMC_PLUGIN_EXPORT int pemc_model_parameter_output_count(const void* model) {
  return static_cast<const pemc::stan_shim::Model*>(model)->n_parameter_names;
}

PEMC_PLUGIN_EXPORT const char* pemc_model_last_error(const void* model) {
  return static_cast<const pemc::stan_shim::Model*>(model)->last_error.c_str();
}

PEMC_PLUGIN_EXPORT int pemc_model_output_count(const void* model) {
  return static_cast<int>(static_cast<const pemc::stan_shim::Model*>(model)->names.size());
}

PEMC_PLUGIN_EXPORT const char* pemc_model_output_name(const void* model, int i) {
  const auto& names = static_cast<const pemc::stan_shim::Model*>(model)->names;
  if (i < 0 || static_cast<std::size_t>(i) >= names.size()) return nullptr;
  return names[static_cast<std::size_t>(i)].c_str();
}

PEMC_PLUGIN_EXPORT int pemc_model_write_outputs(void* model, const double* x, uint64_t seed,
                                                double* out, char* error, size_t error_len) {
  auto& m = *static_cast<pemc::stan_shim::Model*>(model);
  std::copy(x, x + m.params.size(), m.params.begin());
  m.vars.clear();
  try {
    auto rng = pemc::stan_shim::make_rng(seed);
    m.model->write_array(rng, m.params, m.params_i, m.vars, true, true, nullptr);
    if (m.vars.size() != m.names.size()) {
      pemc::stan_shim::copy_message("write_array gave " + std::to_string(m.vars.size()) +
                                        " values for " + std::to_string(m.names.size()) + " names",
                                    error, error_len);
      return 1;
    }
    std::copy(m.vars.begin(), m.vars.end(), out);
    return 0;
  } catch (const std::exception& e) {
    pemc::stan_shim::copy_message(e.what(), error, error_len);
  } catch (...) {
    pemc::stan_shim::copy_message("unknown exception in write_array", error, error_len);
  }
  // write_array appends in the names' order: what it wrote before the throw stands.
  const std::size_t written = std::min(m.vars.size(), m.names.size());
  std::copy(m.vars.begin(), m.vars.begin() + static_cast<std::ptrdiff_t>(written), out);
  std::fill(out + written, out + m.names.size(), std::numeric_limits<double>::quiet_NaN());
  return 2;
}

}  // extern "C"
