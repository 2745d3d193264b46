#include "targets/plugin.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <system_error>

#include "core/error.hpp"
#include "pemc/v1/config.pb.h"
#include "targets/plugin_abi.h"

namespace pemc::targets {

struct PluginTarget::Api {
  pemc_plugin_abi_version_fn abi_version = nullptr;
  pemc_model_create_fn create = nullptr;
  pemc_model_destroy_fn destroy = nullptr;
  pemc_model_dim_fn dim = nullptr;
  pemc_model_potential_gradient_fn potential_gradient = nullptr;
  pemc_model_initial_point_fn initial_point = nullptr;  // optional
  pemc_model_truth_fn truth = nullptr;                  // optional
  // Version 2.
  pemc_model_output_count_fn output_count = nullptr;
  pemc_model_output_name_fn output_name = nullptr;
  pemc_model_write_outputs_fn write_outputs = nullptr;
  pemc_model_potential_fn potential = nullptr;    // optional
  pemc_model_last_error_fn last_error = nullptr;  // optional
  pemc_model_lp_offset_fn lp_offset = nullptr;    // optional
  pemc_model_parameter_output_count_fn parameter_output_count = nullptr;  // optional
};

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string where(const std::string& library) { return "plugin library '" + library + "': "; }

std::string dl_error_text() {
  const char* e = dlerror();
  return e != nullptr ? std::string(e) : std::string("unknown dynamic loader error");
}

// The string handed to dlopen; see PluginOptions::library.
std::string resolve_path(const std::string& library) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (library.find('/') != std::string::npos) {
    if (!fs::exists(library, ec)) throw ConfigError(where(library) + "file not found");
    if (fs::is_directory(library, ec))
      throw ConfigError(where(library) + "is a directory, not a shared library");
    return library;
  }
  if (fs::is_regular_file(library, ec)) return "./" + library;  // dlopen would not look in "."
  return library;
}

// dlsym that distinguishes "absent" (nullptr) without tripping over a stale dlerror.
void* find_symbol(void* handle, const char* name) {
  dlerror();
  return dlsym(handle, name);
}

template <class Fn>
Fn required_symbol(void* handle, const char* name, const std::string& library) {
  void* p = find_symbol(handle, name);
  if (p == nullptr)
    throw ConfigError(where(library) + "missing required symbol '" + name +
                      "' (see src/targets/plugin_abi.h)");
  return reinterpret_cast<Fn>(p);
}

template <class Fn>
Fn optional_symbol(void* handle, const char* name) {
  return reinterpret_cast<Fn>(find_symbol(handle, name));
}

}  // namespace

PluginTarget::PluginTarget(const PluginOptions& options)
    : library_(options.library), name_(options.name), api_(std::make_unique<Api>()) {
  if (library_.empty()) throw ConfigError("plugin target: empty library path");
  const std::string path = resolve_path(library_);

  dlerror();
  void* raw = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (raw == nullptr) {
    std::string msg = where(library_) + "cannot be loaded as a shared library: " + dl_error_text();
    if (path.find('/') == std::string::npos)
      msg += " (not in the current directory; searched the dynamic loader's path)";
    throw ConfigError(msg);
  }
  handle_ = std::shared_ptr<void>(raw, [](void* h) { dlclose(h); });

  Api& api = *api_;
  api.abi_version =
      required_symbol<pemc_plugin_abi_version_fn>(raw, "pemc_plugin_abi_version", library_);
  const int version = api.abi_version();
  if (version != 1 && version != PEMC_PLUGIN_ABI_VERSION)
    throw ConfigError(where(library_) + "ABI version mismatch: the plugin reports " +
                      std::to_string(version) + ", this pemc expects 1 or " +
                      std::to_string(PEMC_PLUGIN_ABI_VERSION));
  abi_version_ = version;
  api.create = required_symbol<pemc_model_create_fn>(raw, "pemc_model_create", library_);
  api.destroy = required_symbol<pemc_model_destroy_fn>(raw, "pemc_model_destroy", library_);
  api.dim = required_symbol<pemc_model_dim_fn>(raw, "pemc_model_dim", library_);
  api.potential_gradient = required_symbol<pemc_model_potential_gradient_fn>(
      raw, "pemc_model_potential_gradient", library_);
  api.initial_point = optional_symbol<pemc_model_initial_point_fn>(raw, "pemc_model_initial_point");
  api.truth = optional_symbol<pemc_model_truth_fn>(raw, "pemc_model_truth");
  if (version >= 2) {
    api.output_count =
        required_symbol<pemc_model_output_count_fn>(raw, "pemc_model_output_count", library_);
    api.output_name =
        required_symbol<pemc_model_output_name_fn>(raw, "pemc_model_output_name", library_);
    api.write_outputs =
        required_symbol<pemc_model_write_outputs_fn>(raw, "pemc_model_write_outputs", library_);
    api.potential = optional_symbol<pemc_model_potential_fn>(raw, "pemc_model_potential");
    api.last_error = optional_symbol<pemc_model_last_error_fn>(raw, "pemc_model_last_error");
    api.lp_offset = optional_symbol<pemc_model_lp_offset_fn>(raw, "pemc_model_lp_offset");
    api.parameter_output_count = optional_symbol<pemc_model_parameter_output_count_fn>(
        raw, "pemc_model_parameter_output_count");
  }

  std::array<char, 1024> error{};
  void* model = api.create(options.argument.c_str(), error.data(), error.size());
  error.back() = '\0';
  if (model == nullptr)
    throw ConfigError((options.label.empty() ? where(library_) + "pemc_model_create(\"" +
                                                   options.argument + "\") failed: "
                                             : options.label + ": ") +
                      (error[0] != '\0' ? error.data() : "(no message)"));
  // From here on the model must be destroyed on every exit path.
  struct Guard {
    pemc_model_destroy_fn destroy;
    void* model;
    ~Guard() {
      if (model != nullptr) destroy(model);
    }
  } guard{api.destroy, model};

  const int d = api.dim(model);
  if (d <= 0 || d > kMaxDim)
    throw ConfigError(where(library_) + "pemc_model_dim returned " + std::to_string(d) +
                      ", expected a dimension in [1, " + std::to_string(kMaxDim) + "]");
  if (options.expected_dim && d != *options.expected_dim)
    throw ConfigError(where(library_) + "model dimension " + std::to_string(d) +
                      " does not match the expected dimension " +
                      std::to_string(*options.expected_dim));
  if (version >= 2) {
    const int n = api.output_count(model);
    if (n < 0 || n > kMaxDim)
      throw ConfigError(where(library_) + "pemc_model_output_count returned " + std::to_string(n) +
                        ", expected a count in [0, " + std::to_string(kMaxDim) + "]");
    output_names_.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      const char* name = api.output_name(model, i);
      if (name == nullptr || name[0] == '\0')
        throw ConfigError(where(library_) + "pemc_model_output_name(" + std::to_string(i) +
                          ") gave no name");
      output_names_.emplace_back(name);
    }
    if (api.parameter_output_count != nullptr) {
      const int k = api.parameter_output_count(model);
      if (k < 0 || k > n)
        throw ConfigError(where(library_) + "pemc_model_parameter_output_count returned " +
                          std::to_string(k) + ", expected a count in [0, " + std::to_string(n) +
                          "] (the number of outputs)");
      n_parameter_outputs_ = k;
    }
  }
  dim_ = d;
  scratch_grad_.resize(d);
  model_ = model;
  guard.model = nullptr;
}

PluginTarget::~PluginTarget() {
  if (model_ != nullptr) api_->destroy(model_);
  // handle_ is released (dlclose) after this body, once the model is gone.
}

double PluginTarget::potential(ConstVectorRef x) const {
  if (api_->potential == nullptr) return potential_and_gradient(x, scratch_grad_);
  check_size(x.size(), dim_);
  const double u = api_->potential(model_, x.data());
  check_model_error(u);
  return u;
}

void PluginTarget::check_size(Eigen::Index x_size, Eigen::Index grad_size) const {
  if (x_size != dim_ || grad_size != dim_)
    throw Error("plugin target '" + library_ + "': called with " + std::to_string(x_size) +
                " coordinates and a gradient of " + std::to_string(grad_size) + ", expected " +
                std::to_string(dim_));
}

void PluginTarget::check_model_error(double potential) const {
  const bool rejected = potential == std::numeric_limits<double>::infinity();
  if ((!std::isnan(potential) && !rejected) || api_->last_error == nullptr) return;
  const char* message = api_->last_error(model_);
  if (message == nullptr || message[0] == '\0') return;
  if (rejected)
    messages_.add(ModelMessageKind::kRejection, message);
  else
    throw Error("the model in '" + library_ + "' failed: " + message);
}

bool PluginTarget::write_outputs(ConstVectorRef x, std::uint64_t seed,
                                 std::span<double> out) const {
  std::fill(out.begin(), out.end(), kNaN);
  if (api_->write_outputs == nullptr || out.empty()) return out.empty();
  if (out.size() != output_names_.size() || x.size() != dim_)
    throw Error("plugin target '" + library_ + "': write_outputs with " +
                std::to_string(x.size()) + " coordinates and " + std::to_string(out.size()) +
                " outputs, expected " + std::to_string(dim_) + " and " +
                std::to_string(output_names_.size()));
  std::array<char, 512> error{};
  const int rc = api_->write_outputs(model_, x.data(), seed, out.data(), error.data(), error.size());
  if (rc == 0) return true;
  if (rc != 2) std::fill(out.begin(), out.end(), kNaN);  // 2: out holds what was computed
  error.back() = '\0';
  messages_.add(ModelMessageKind::kOutputs,
                error[0] != '\0' ? error.data() : "the model gave no message");
  return false;
}

double PluginTarget::potential_and_gradient(ConstVectorRef x, VectorRef grad) const {
  check_size(x.size(), grad.size());
  const double u = api_->potential_gradient(model_, x.data(), grad.data());
  check_model_error(u);
  if (std::isfinite(u) && !grad.allFinite()) return kNaN;
  return u;
}

bool PluginTarget::has_lp_offset() const { return api_->lp_offset != nullptr; }

std::optional<double> PluginTarget::lp_offset(ConstVectorRef x) const {
  if (api_->lp_offset == nullptr) return std::nullopt;
  check_size(x.size(), dim_);
  double offset = kNaN;
  if (api_->lp_offset(model_, x.data(), &offset) != 0 || !std::isfinite(offset))
    return std::nullopt;
  return offset;
}

Truth PluginTarget::truth() const {
  Truth t;
  if (api_->truth == nullptr) return t;
  Vector mean = Vector::Constant(dim_, kNaN);
  Vector second = Vector::Constant(dim_, kNaN);
  double log_z = kNaN;
  if (api_->truth(model_, mean.data(), second.data(), &log_z) != 0) return t;
  if (mean.allFinite()) t.mean = std::move(mean);
  if (second.allFinite()) t.second_moment = std::move(second);
  if (std::isfinite(log_z)) t.log_z = log_z;
  return t;
}

std::optional<Vector> PluginTarget::default_initial_point() const {
  if (api_->initial_point == nullptr) return std::nullopt;
  Vector x = Vector::Constant(dim_, kNaN);
  if (api_->initial_point(model_, x.data()) != 0 || !x.allFinite()) return std::nullopt;
  return x;
}

std::shared_ptr<PluginTarget> make_plugin(const v1::PluginTarget& config,
                                          std::optional<int> expected_dim) {
  if (config.library().empty()) throw ConfigError("target.plugin.library: empty");
  PluginOptions o;
  o.library = config.library();
  o.argument = config.argument();
  o.expected_dim = expected_dim;
  return std::make_shared<PluginTarget>(o);
}

}  // namespace pemc::targets
