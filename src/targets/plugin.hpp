#pragma once
// A user's model loaded from a shared library with the C ABI of targets/plugin_abi.h.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "targets/target.hpp"

namespace pemc::v1 {
class PluginTarget;
}

namespace pemc::targets {

struct PluginOptions {
  // Path to the .so. A name without '/' is taken from the current directory if such a file
  // exists there, else searched by dlopen's usual rules (LD_LIBRARY_PATH, ld.so.cache, ...).
  std::string library;
  std::string argument;             // passed verbatim to pemc_model_create
  std::optional<int> expected_dim;  // if set, the model's dim must equal it
  std::string name = "plugin";      // the target's name() in records and reports
  // Where a failed pemc_model_create is reported from, e.g. "Stan model 'm.stan'" (default: the
  // library and the argument).
  std::string label;
};

class PluginTarget final : public Target {
 public:
  // Loads the library and creates the model. Throws ConfigError naming the library and the
  // problem: file missing, not loadable (dlerror text), a missing required symbol, ABI version
  // mismatch, create failure (with the plugin's message), dim outside [1, kMaxDim] or different
  // from expected_dim.
  explicit PluginTarget(const PluginOptions& options);
  ~PluginTarget() override;
  PluginTarget(const PluginTarget&) = delete;
  PluginTarget& operator=(const PluginTarget&) = delete;

  int dim() const override { return dim_; }
  std::string name() const override { return name_; }
  // The plugin's pemc_model_potential where exported (version 2), else potential_gradient with a
  // scratch gradient buffer.
  double potential(ConstVectorRef x) const override;
  // A finite potential with a non-finite gradient is turned into NaN (a rejection). A NaN for
  // which a version-2 plugin's pemc_model_last_error gives a message throws Error with it (an
  // error in the model, not a rejection: the chain fails with that reason); +inf with a message
  // is a rejection whose reason is kept for take_model_messages.
  double potential_and_gradient(ConstVectorRef x, VectorRef grad) const override;
  // From pemc_model_truth if exported: mean / second_moment if all entries finite, log_z if finite.
  Truth truth() const override;
  // From pemc_model_initial_point if exported, returns 0 and gives a finite point.
  std::optional<Vector> default_initial_point() const override;
  // Version-2 plugins: pemc_model_output_name / pemc_model_write_outputs. Version 1: none.
  std::vector<std::string> output_names() const override { return output_names_; }
  // A failure's message is kept for take_model_messages; partial outputs (the plugin returned 2)
  // are kept as the plugin wrote them.
  bool write_outputs(ConstVectorRef x, std::uint64_t seed, std::span<double> out) const override;
  std::vector<ModelMessage> take_model_messages() const override { return messages_.take(); }
  // From the optional pemc_model_lp_offset and pemc_model_parameter_output_count (Stan's shim).
  bool has_lp_offset() const override;
  std::optional<double> lp_offset(ConstVectorRef x) const override;
  std::optional<int> n_parameter_outputs() const override { return n_parameter_outputs_; }
  int abi_version() const { return abi_version_; }

  const std::string& library() const { return library_; }

  static constexpr int kMaxDim = 10'000'000;

 private:
  struct Api;
  void check_size(Eigen::Index x_size, Eigen::Index grad_size) const;
  // After a NaN: throws Error with pemc_model_last_error's message, if the plugin has one to give.
  // After +inf: keeps the message (the reason for the rejection), if there is one.
  void check_model_error(double potential) const;
  std::string library_;
  std::string name_;
  std::shared_ptr<void> handle_;  // dlclose on release; declared before model_ (destroyed after)
  std::unique_ptr<Api> api_;
  void* model_ = nullptr;
  int dim_ = 0;
  int abi_version_ = 0;
  std::vector<std::string> output_names_;
  std::optional<int> n_parameter_outputs_;
  mutable Vector scratch_grad_;
  mutable PendingModelMessages messages_;
};

// From a config (fields target.plugin.library / argument), optionally checking the dimension.
std::shared_ptr<PluginTarget> make_plugin(const v1::PluginTarget& config,
                                          std::optional<int> expected_dim = std::nullopt);

}  // namespace pemc::targets
