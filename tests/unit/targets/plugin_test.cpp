// PluginTarget: loading the example plugin (libpemc_example_plugin.so in the build directory,
// CMake target pemc_example_plugin), its model against the closed form, and every error path:
// missing file, not a shared library, missing symbols, ABI mismatch, create failure, bad dims.
// Libraries with a wrong ABI version or a missing entry point are compiled at test time with the
// system C compiler (`cc`), from the small sources below.
#include "targets/plugin.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "pemc/v1/config.pb.h"
#include "support/gradient_check.hpp"

namespace pemc::targets {
namespace {

namespace fs = std::filesystem;
using pemc::testing::expect_gradient_matches;

const std::string kExample = PEMC_BINARY_DIR "/libpemc_example_plugin.so";

// The example model (see example_plugin.c): m_i = (i mod 3) - 1, s_i = 2^((i mod 4) - 1).
double ex_mean(int i) { return (i % 3) - 1.0; }
double ex_sd(int i) { return std::ldexp(1.0, i % 4 - 1); }

std::shared_ptr<PluginTarget> load(const std::string& argument,
                                   std::optional<int> expected_dim = std::nullopt,
                                   const std::string& library = kExample) {
  PluginOptions o;
  o.library = library;
  o.argument = argument;
  o.expected_dim = expected_dim;
  return std::make_shared<PluginTarget>(o);
}

// Runs fn, expects a ConfigError whose message contains every fragment.
template <class Fn>
void expect_config_error(Fn&& fn, std::initializer_list<std::string> fragments) {
  try {
    fn();
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    for (const std::string& f : fragments)
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos)
          << "message: " << e.what() << "\nmissing: " << f;
  }
}

class ExamplePlugin : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(kExample))
        << kExample << " is missing: build the CMake target pemc_example_plugin first";
  }
};

TEST_F(ExamplePlugin, ModelMatchesClosedForm) {
  const auto t = load("dim=5");
  ASSERT_EQ(t->dim(), 5);
  EXPECT_EQ(t->name(), "plugin");
  Vector x(5), g(5);
  for (int k = 0; k < 20; ++k) {
    for (int i = 0; i < 5; ++i) x[i] = std::sin(1.7 * k + i) * 3.0;
    double u = 0;
    for (int i = 0; i < 5; ++i) u += 0.5 * std::pow((x[i] - ex_mean(i)) / ex_sd(i), 2);
    EXPECT_NEAR(t->potential_and_gradient(x, g), u, 1e-13 * std::max(1.0, u));
    for (int i = 0; i < 5; ++i)
      EXPECT_NEAR(g[i], (x[i] - ex_mean(i)) / (ex_sd(i) * ex_sd(i)), 1e-13);
    EXPECT_EQ(t->potential(x), t->potential_and_gradient(x, g));
    expect_gradient_matches(*t, x);
  }
}

TEST_F(ExamplePlugin, TruthAndInitialPoint) {
  const auto t = load("dim=6");
  const Truth tr = t->truth();
  ASSERT_TRUE(tr.mean && tr.second_moment && tr.log_z);
  EXPECT_FALSE(tr.cross_moment);
  double log_z = 3.0 * std::log(2 * std::numbers::pi);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ((*tr.mean)[i], ex_mean(i));
    EXPECT_EQ((*tr.second_moment)[i], ex_mean(i) * ex_mean(i) + ex_sd(i) * ex_sd(i));
    log_z += std::log(ex_sd(i));
  }
  EXPECT_NEAR(*tr.log_z, log_z, 1e-14);
  const auto x0 = t->default_initial_point();
  ASSERT_TRUE(x0);
  EXPECT_EQ(*x0, *tr.mean);
  EXPECT_EQ(t->potential(*x0), 0.0);
}

TEST_F(ExamplePlugin, DefaultDimensionAndTwoIndependentInstances) {
  const auto a = load("");
  const auto b = load("dim=3");
  EXPECT_EQ(a->dim(), 2);
  EXPECT_EQ(b->dim(), 3);
  Vector g(2);
  EXPECT_TRUE(std::isfinite(a->potential_and_gradient(Vector::Zero(2), g)));
}

TEST_F(ExamplePlugin, NanInputIsNonFinite) {
  const auto t = load("dim=2");
  Vector g(2);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(std::isfinite(t->potential(Eigen::Vector2d(nan, 0.0))));
  EXPECT_FALSE(std::isfinite(t->potential_and_gradient(Eigen::Vector2d(0.0, nan), g)));
  EXPECT_THROW(t->potential(Vector::Zero(3)), Error);  // wrong length never reaches the plugin
}

TEST_F(ExamplePlugin, CreateFailureCarriesThePluginMessage) {
  expect_config_error([] { load("fail"); },
                      {kExample, "pemc_model_create(\"fail\") failed", "asked to fail"});
  expect_config_error([] { load("dim=2,bogus"); }, {kExample, "unknown argument token 'bogus'"});
  expect_config_error([] { load("dim=x"); }, {"bad dim value 'x'"});
}

TEST_F(ExamplePlugin, BadDimensionsAreRejected) {
  expect_config_error([] { load("dim=0"); }, {kExample, "pemc_model_dim returned 0"});
  expect_config_error([] { load("dim=-4"); }, {"pemc_model_dim returned -4"});
  expect_config_error([] { load("dim=20000000"); }, {"returned 20000000", "[1, 10000000]"});
  expect_config_error([] { load("dim=3", 4); },
                      {kExample, "model dimension 3 does not match the expected dimension 4"});
  EXPECT_EQ(load("dim=4", 4)->dim(), 4);
}

TEST_F(ExamplePlugin, FromConfig) {
  v1::PluginTarget cfg;
  cfg.set_library(kExample);
  cfg.set_argument("dim=7");
  EXPECT_EQ(make_plugin(cfg)->dim(), 7);
  expect_config_error([&] { make_plugin(cfg, 8); }, {"expected dimension 8"});
  cfg.clear_library();
  expect_config_error([&] { make_plugin(cfg); }, {"target.plugin.library"});
}

TEST(PluginErrors, MissingFile) {
  const std::string path = PEMC_BINARY_DIR "/no_such_plugin_here.so";
  expect_config_error([&] { load("", std::nullopt, path); }, {path, "file not found"});
  expect_config_error([&] { load("", std::nullopt, "libno_such_pemc_plugin.so"); },
                      {"libno_such_pemc_plugin.so", "cannot be loaded"});
}

// A scratch directory removed at the end of each test.
class PluginScratch : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("pemc_plugin_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // Compiles C source into dir_/name.so with `cc`; fails the test if that is impossible.
  std::string build(const std::string& name, const std::string& source) {
    const fs::path c = dir_ / (name + ".c");
    const fs::path so = dir_ / (name + ".so");
    std::ofstream(c) << source;
    const std::string cmd = "cc -shared -fPIC -o '" + so.string() + "' '" + c.string() + "' > '" +
                            (dir_ / (name + ".log")).string() + "' 2>&1";
    const int rc = std::system(cmd.c_str());
    EXPECT_EQ(rc, 0) << "could not compile a test plugin with: " << cmd;
    return so.string();
  }
  fs::path dir_;
};

TEST_F(PluginScratch, NotASharedLibrary) {
  const std::string path = (dir_ / "text.so").string();
  std::ofstream(path) << "this is not an ELF file\n";
  expect_config_error([&] { load("", std::nullopt, path); },
                      {path, "cannot be loaded as a shared library", "text.so"});
  expect_config_error([&] { load("", std::nullopt, dir_.string()); }, {"is a directory"});
}

TEST(PluginErrors, LibraryWithoutTheEntryPoints) {
  // libm exists on every glibc system and exports none of the plugin symbols.
  expect_config_error([] { load("", std::nullopt, "libm.so.6"); },
                      {"libm.so.6", "missing required symbol 'pemc_plugin_abi_version'"});
}

constexpr const char* kModelBody = R"(
#include <stddef.h>
#include <stdlib.h>
void* pemc_model_create(const char* a, char* e, size_t n) { return malloc(8); }
void pemc_model_destroy(void* m) { free(m); }
int pemc_model_dim(const void* m) { return 2; }
)";

TEST_F(PluginScratch, AbiVersionMismatch) {
  const std::string so = build("abi3", std::string(kModelBody) + R"(
int pemc_plugin_abi_version(void) { return 3; }
double pemc_model_potential_gradient(void* m, const double* x, double* g) { g[0] = g[1] = 0; return 0; }
)");
  expect_config_error([&] { load("", std::nullopt, so); },
                      {so, "ABI version mismatch", "reports 3", "expects 1 or 2"});
}

constexpr const char* kGaussianGradient = R"(
double pemc_model_potential_gradient(void* m, const double* x, double* g) {
  g[0] = x[0]; g[1] = x[1]; return 0.5 * (x[0] * x[0] + x[1] * x[1]);
}
)";

TEST_F(PluginScratch, VersionTwoNeedsTheOutputFunctions) {
  const std::string so = build("v2_no_outputs", std::string(kModelBody) + kGaussianGradient + R"(
int pemc_plugin_abi_version(void) { return 2; }
int pemc_model_output_count(const void* m) { return 1; }
)");
  expect_config_error([&] { load("", std::nullopt, so); },
                      {so, "missing required symbol 'pemc_model_output_name'"});
}

// A version-2 model: outputs (exp(x1), x2 + seed mod 7) named "sigma" and "z[1]", none beyond
// x1 > 50 and only the first beyond x1 < -50 (rc 2: partial); its potential reports an error (not
// a rejection) at x1 > 100, is NaN without a message at x1 < -100 and rejects x2 > 100 with a
// reason.
TEST_F(PluginScratch, VersionTwoOutputsAndModelErrors) {
  const std::string so = build("v2", std::string(kModelBody) + R"(
#include <math.h>
#include <stdint.h>
#include <string.h>
static const char* names[2] = {"sigma", "z[1]"};
static const char* message = "";
int pemc_plugin_abi_version(void) { return 2; }
int pemc_model_output_count(const void* m) { return 2; }
const char* pemc_model_output_name(const void* m, int i) { return names[i]; }
int pemc_model_write_outputs(void* m, const double* x, uint64_t seed, double* out, char* e, size_t n) {
  if (x[0] > 50) { e[0] = 'x'; e[1] = 0; return 1; }
  out[0] = exp(x[0]);
  if (x[0] < -50) { out[1] = 0.0 / 0.0; strcpy(e, "z failed"); return 2; }
  out[1] = x[1] + (double)(seed % 7); return 0;
}
const char* pemc_model_last_error(const void* m) { return message; }
double pemc_model_potential_gradient(void* m, const double* x, double* g) {
  g[0] = x[0]; g[1] = x[1];
  message = x[0] > 100 ? "index 3 out of range" : x[1] > 100 ? "x2 is too large" : "";
  if (x[1] > 100) return 1.0 / 0.0;
  return (x[0] > 100 || x[0] < -100) ? 0.0 / 0.0 : 0.5 * (x[0] * x[0] + x[1] * x[1]);
}
)");
  const auto t = load("", std::nullopt, so);
  EXPECT_EQ(t->abi_version(), 2);
  EXPECT_EQ(t->output_names(), (std::vector<std::string>{"sigma", "z[1]"}));
  // Without the optional functions: no lp offset, no split of the outputs.
  EXPECT_FALSE(t->has_lp_offset());
  EXPECT_FALSE(t->lp_offset(Eigen::Vector2d(0.0, 1.0)).has_value());
  EXPECT_FALSE(t->n_parameter_outputs().has_value());
  std::vector<double> out(2);
  EXPECT_TRUE(t->write_outputs(Eigen::Vector2d(0.0, 1.0), 10, out));
  EXPECT_EQ(out[0], 1.0);
  EXPECT_EQ(out[1], 4.0);  // 1 + 10 mod 7
  EXPECT_FALSE(t->write_outputs(Eigen::Vector2d(60.0, 1.0), 10, out));
  EXPECT_TRUE(std::isnan(out[0]) && std::isnan(out[1]));
  EXPECT_FALSE(t->write_outputs(Eigen::Vector2d(-60.0, 1.0), 10, out));
  EXPECT_EQ(out[0], std::exp(-60.0));  // rc 2: what the plugin computed stands
  EXPECT_TRUE(std::isnan(out[1]));
  Vector g(2);
  EXPECT_EQ(t->potential_and_gradient(Eigen::Vector2d(0.0, 200.0), g),
            std::numeric_limits<double>::infinity());
  const auto said = t->take_model_messages();
  ASSERT_EQ(said.size(), 3u);
  EXPECT_EQ(said[0].kind, ModelMessageKind::kOutputs);
  EXPECT_EQ(said[0].text, "x");
  EXPECT_EQ(said[1].text, "z failed");
  EXPECT_EQ(said[2].kind, ModelMessageKind::kRejection);
  EXPECT_EQ(said[2].text, "x2 is too large");
  EXPECT_TRUE(t->take_model_messages().empty());  // drained
  EXPECT_TRUE(std::isnan(t->potential_and_gradient(Eigen::Vector2d(-200.0, 0.0), g)));
  EXPECT_TRUE(t->take_model_messages().empty());  // a NaN without a message says nothing
  try {
    t->potential_and_gradient(Eigen::Vector2d(200.0, 0.0), g);
    ADD_FAILURE() << "a NaN with a message must throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("index 3 out of range"), std::string::npos) << e.what();
  }
}

// The optional lp offset and parameter count (what pemc's Stan shim exports): an offset the model
// cannot give (rc != 0, or not finite) is none; a count outside [0, output count] is refused.
TEST_F(PluginScratch, LpOffsetAndParameterOutputCount) {
  const std::string outputs = R"(
#include <stdint.h>
static const char* names[2] = {"mu", "y_rep"};
int pemc_plugin_abi_version(void) { return 2; }
int pemc_model_output_count(const void* m) { return 2; }
const char* pemc_model_output_name(const void* m, int i) { return names[i]; }
int pemc_model_write_outputs(void* m, const double* x, uint64_t s, double* o, char* e, size_t n) {
  o[0] = x[0]; o[1] = x[1]; return 0;
}
int pemc_model_lp_offset(void* m, const double* x, double* offset) {
  if (x[0] > 10) return 1;
  *offset = x[0] < -10 ? 1.0 / 0.0 : -3.5;
  return 0;
}
)";
  const std::string so = build("offset", std::string(kModelBody) + kGaussianGradient + outputs +
                                             "int pemc_model_parameter_output_count(const void* "
                                             "m) { return 1; }\n");
  const auto t = load("", std::nullopt, so);
  EXPECT_TRUE(t->has_lp_offset());
  EXPECT_EQ(t->lp_offset(Eigen::Vector2d(0.0, 1.0)), std::optional<double>(-3.5));
  EXPECT_FALSE(t->lp_offset(Eigen::Vector2d(20.0, 1.0)).has_value());
  EXPECT_FALSE(t->lp_offset(Eigen::Vector2d(-20.0, 1.0)).has_value());
  EXPECT_EQ(t->n_parameter_outputs(), std::optional<int>(1));
  const std::string bad = build("bad_count", std::string(kModelBody) + kGaussianGradient + outputs +
                                                 "int pemc_model_parameter_output_count(const "
                                                 "void* m) { return 3; }\n");
  expect_config_error([&] { load("", std::nullopt, bad); },
                      {bad, "pemc_model_parameter_output_count returned 3", "[0, 2]"});
}

TEST_F(PluginScratch, VersionOneHasNoOutputs) {
  const std::string so = build("v1", std::string(kModelBody) + kGaussianGradient + R"(
int pemc_plugin_abi_version(void) { return 1; }
)");
  const auto t = load("", std::nullopt, so);
  EXPECT_EQ(t->abi_version(), 1);
  EXPECT_TRUE(t->output_names().empty());
}

TEST_F(PluginScratch, MissingRequiredSymbolIsNamed) {
  const std::string so = build("nograd", std::string(kModelBody) + R"(
int pemc_plugin_abi_version(void) { return 1; }
)");
  expect_config_error([&] { load("", std::nullopt, so); },
                      {so, "missing required symbol 'pemc_model_potential_gradient'"});
}

TEST_F(PluginScratch, CreateWithoutMessageAndOptionalSymbolsAbsent) {
  const std::string so = build("minimal", R"(
#include <stddef.h>
#include <string.h>
static int instance;
int pemc_plugin_abi_version(void) { return 1; }
void* pemc_model_create(const char* a, char* e, size_t n) { return strcmp(a, "no") == 0 ? NULL : &instance; }
void pemc_model_destroy(void* m) {}
int pemc_model_dim(const void* m) { return 2; }
/* finite potential with a NaN gradient at x0 < 0: pemc must turn it into a rejection */
double pemc_model_potential_gradient(void* m, const double* x, double* g) {
  g[0] = x[0] < 0 ? 0.0 / 0.0 : x[0]; g[1] = x[1];
  return 0.5 * (x[0] * x[0] + x[1] * x[1]);
}
)");
  expect_config_error([&] { load("no", std::nullopt, so); }, {"failed: (no message)"});
  const auto t = load("", std::nullopt, so);
  EXPECT_FALSE(t->default_initial_point());
  const Truth tr = t->truth();
  EXPECT_FALSE(tr.mean || tr.second_moment || tr.log_z);
  Vector g(2);
  EXPECT_EQ(t->potential_and_gradient(Eigen::Vector2d(1.0, 2.0), g), 2.5);
  EXPECT_TRUE(std::isnan(t->potential_and_gradient(Eigen::Vector2d(-1.0, 2.0), g)));
  EXPECT_TRUE(std::isnan(t->potential(Eigen::Vector2d(-1.0, 2.0))));
}

}  // namespace
}  // namespace pemc::targets
