// Loading configs: text and binary formats, SourceMap locations, and every load-time error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_test_support.hpp"

namespace pemc::config {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::config_error;
using testing::fixture;
using testing::TempDir;

// ---- text format --------------------------------------------------------------------------------

TEST(LoadConfig, ReadsTheMinimalTextFixture) {
  const auto c = load_config(fixture("gaussian_hmc.pbtxt"));
  EXPECT_EQ(c.path, fixture("gaussian_hmc.pbtxt"));
  ASSERT_TRUE(c.config.target().has_gaussian());
  EXPECT_EQ(c.config.target().gaussian().mean_size(), 2);
  ASSERT_TRUE(c.config.sampler().has_hmc());
  EXPECT_DOUBLE_EQ(c.config.sampler().hmc().step_size(), 0.2);
  EXPECT_EQ(c.config.sampler().hmc().n_leapfrog(), 10);
  EXPECT_EQ(c.config.iterations(), 1000);
  EXPECT_FALSE(c.config.has_warmup());
  EXPECT_EQ(c.config.seeds().values_size(), 2);
  EXPECT_EQ(c.config.output().path(), "gaussian_hmc.pemc");
  // Line 3: `sampler { hmc { step_size: 0.2 n_leapfrog: 10 } }`, step_size at column 17.
  EXPECT_EQ(c.source.where("sampler.hmc.step_size"), fixture("gaussian_hmc.pbtxt").string() + ":3:17");
}

TEST(LoadConfig, ReadsTheOtherValidFixtures) {
  const auto nuts = load_config(fixture("nuts.pbtxt"));
  EXPECT_EQ(nuts.config.name(), "nuts_correlated");
  EXPECT_EQ(nuts.config.sampler().nuts().metric(), pemc::v1::DIAGONAL);
  EXPECT_TRUE(nuts.config.sampler().nuts().adaptation().adapt_metric());
  EXPECT_EQ(nuts.config.target().gaussian().covariance_size(), 4);
  EXPECT_EQ(nuts.config.seeds().count(), 4);
  EXPECT_EQ(nuts.config.seeds().base(), 100u);
  // covariance: [1.0, 0.5,\n 0.5, 2.0] — the third element is on line 7, column 18.
  EXPECT_EQ(nuts.source.location("target.gaussian.covariance[2]").line, 7);
  EXPECT_EQ(nuts.source.location("target.gaussian.covariance[2]").column, 18);

  const auto mix = load_config(fixture("mixture_preset.pbtxt"));
  EXPECT_EQ(mix.config.target().mixture().preset(), pemc::v1::MixtureTarget::KOU_A);
  EXPECT_TRUE(mix.config.init().has_uniform_box());
}

TEST(LoadConfig, AcceptsEveryTextExtension) {
  TempDir dir;
  for (const char* ext : {".pbtxt", ".textproto", ".txtpb"}) {
    const auto p = dir.write(std::string("run") + ext, "iterations: 7\n");
    EXPECT_EQ(load_config(p).config.iterations(), 7) << ext;
  }
}

TEST(SourceMap, LocatesNestedAndRepeatedFieldsOneBased) {
  const std::string text =
      "target {\n"                                              // 1
      "  mixture {\n"                                           // 2
      "    components: [\n"                                     // 3
      "      { weight: 1 mean: [0,\n"                           // 4
      "                         -1] variance: 1 },\n"           // 5
      "      { weight: 2\n"                                     // 6
      "        mean: [1, 1] diag_variance: [1, 2] }\n"          // 7
      "    ]\n"                                                 // 8
      "    components { weight: 3 mean: [2, 2] variance: 1 }\n" // 9
      "  }\n"                                                   // 10
      "}\n"                                                     // 11
      "seeds { values: 5 values: [6,\n"                         // 12
      "   7] values: 8 }\n";                                    // 13
  const auto c = parse_text_config(text, "map.pbtxt");
  const auto& s = c.source;
  EXPECT_EQ(s.where("target"), "map.pbtxt:1:1");
  EXPECT_EQ(s.where("target.mixture"), "map.pbtxt:2:3");
  EXPECT_EQ(s.where("target.mixture.components"), "map.pbtxt:3:5");
  EXPECT_EQ(s.where("target.mixture.components[0]"), "map.pbtxt:4:7");
  EXPECT_EQ(s.where("target.mixture.components[0].mean[1]"), "map.pbtxt:5:26");
  EXPECT_EQ(s.where("target.mixture.components[1]"), "map.pbtxt:6:7");
  EXPECT_EQ(s.where("target.mixture.components[1].mean"), "map.pbtxt:7:9");
  EXPECT_EQ(s.where("target.mixture.components[1].diag_variance[1]"), "map.pbtxt:7:41");
  EXPECT_EQ(s.where("target.mixture.components[2]"), "map.pbtxt:9:5");
  EXPECT_EQ(s.where("target.mixture.components[2].weight"), "map.pbtxt:9:18");
  // Mixed list and single-value syntax: element i is the i-th value, wherever it was written.
  EXPECT_EQ(s.where("seeds.values[0]"), "map.pbtxt:12:9");
  EXPECT_EQ(s.where("seeds.values[1]"), "map.pbtxt:12:28");
  EXPECT_EQ(s.where("seeds.values[2]"), "map.pbtxt:13:4");
  EXPECT_EQ(s.where("seeds.values[3]"), "map.pbtxt:13:7");
  EXPECT_EQ(c.config.seeds().values(3), 8u);
}

TEST(SourceMap, FallsBackToTheNearestLocatedParent) {
  const auto c = parse_text_config("iterations: 3\nsampler {\n  hmc { step_size: 1 }\n}\n", "p.pbtxt");
  EXPECT_EQ(c.source.where("sampler.hmc.adaptation.gamma"), "p.pbtxt:3:3");
  EXPECT_EQ(c.source.where("sampler.nuts"), "p.pbtxt:2:1");
  EXPECT_EQ(c.source.where("seeds.values[4]"), "p.pbtxt");  // nothing located: just the file
  EXPECT_EQ(c.source.where(""), "p.pbtxt");
  EXPECT_EQ(c.source.location("sampler.hmc.adaptation").line, 0);
}

TEST(SourceMap, ParentPaths) {
  EXPECT_EQ(parent_field_path("a.b[2].c"), "a.b[2]");
  EXPECT_EQ(parent_field_path("a.b[2]"), "a.b");
  EXPECT_EQ(parent_field_path("a.b"), "a");
  EXPECT_EQ(parent_field_path("a"), "");
  EXPECT_EQ(parent_field_path(""), "");
}

TEST(SourceMap, OriginsReplaceFileLocations) {
  auto c = parse_text_config("iterations: 3\n", "o.pbtxt");
  EXPECT_EQ(c.source.where("iterations"), "o.pbtxt:1:1");
  c.source.set_origin("iterations", "command line (--iterations 9)");
  EXPECT_EQ(c.source.where("iterations"), "command line (--iterations 9)");
  EXPECT_EQ(c.source.location("iterations").line, 0);
}

// ---- syntax errors -----------------------------------------------------------------------------

TEST(LoadConfigErrors, SyntaxErrorNamesFileLineColumnAndField) {
  const auto path = fixture("bad_syntax.pbtxt");
  const std::string msg = config_error([&] { load_config(path); });
  EXPECT_THAT(msg, HasSubstr(path.string() + ":4:35: sampler.hmc.step_size: Expected double, got: fast"));
}

TEST(LoadConfigErrors, UnknownFieldListsTheValidNames) {
  const auto path = fixture("bad_unknown_field.pbtxt");
  const std::string msg = config_error([&] { load_config(path); });
  EXPECT_THAT(msg, HasSubstr(path.string() + ":4:9: sampler.hmc.stepsize:"));
  EXPECT_THAT(msg, HasSubstr("no field named \"stepsize\""));
  EXPECT_THAT(msg, HasSubstr("Valid fields here: step_size, n_leapfrog"));
}

TEST(LoadConfigErrors, UnknownFieldInsideAListElementHasItsIndex) {
  const std::string msg = config_error([] {
    parse_text_config("target { mixture {\n components [ { weight: 1 },\n { weigt: 2 } ] } }\n", "x.pbtxt");
  });
  EXPECT_THAT(msg, HasSubstr("x.pbtxt:3:4: target.mixture.components[1].weigt:"));
  EXPECT_THAT(msg, HasSubstr("Valid fields here: weight, mean, variance, diag_variance"));
}

TEST(LoadConfigErrors, MissingClosingBraceIsSuggested) {
  const std::string msg =
      config_error([] { parse_text_config("target { gaussian { mean: [1, 2] }\niterations: 2\n", "b.pbtxt"); });
  EXPECT_THAT(msg, HasSubstr("b.pbtxt:2:1: target.iterations:"));
  EXPECT_THAT(msg, HasSubstr("'iterations' is a field of the top level: is a closing '}' missing"));
}

TEST(LoadConfigErrors, ValueErrorsNameTheField) {
  struct Case {
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"sampler {\n hmc { n_leapfrog: 3.5 } }", "t.pbtxt:2:20: sampler.hmc.n_leapfrog: Expected integer, got: 3.5"},
      {"sampler { hmc { n_leapfrog: 3000000000 } }", "t.pbtxt:1:29: sampler.hmc.n_leapfrog: Integer out of range"},
      {"sampler { hmc { metric: FOO } }", "t.pbtxt:1:29: sampler.hmc.metric: Unknown enumeration value of \"FOO\""},
      {"seeds { values: [1, 2, x] }", "t.pbtxt:1:24: seeds.values[2]: Expected integer, got: x"},
      {"seeds { values: [1, -2] }", "t.pbtxt:1:21: seeds.values[1]: Expected integer, got: -"},
      {"iterations: 1\niterations: 2\n", "t.pbtxt:2:11: iterations: Non-repeated field \"iterations\" is specified multiple times"},
      {"sampler { hmc { step_size: 1 } nuts { step_size: 1 } }",
       "t.pbtxt:1:37: sampler.nuts: Field \"nuts\" is specified along with field \"hmc\""},
      {"name: \"abc\niterations: 2\n", "t.pbtxt:1:11: name: String literals cannot cross line boundaries"},
  };
  for (const auto& c : cases) {
    EXPECT_THAT(config_error([&] { parse_text_config(c.text, "t.pbtxt"); }), HasSubstr(c.expected)) << c.text;
  }
}

// Issue 29, item 7: an unknown enum value lists the valid ones.
TEST(LoadConfigErrors, EnumErrorsListTheValidValues) {
  EXPECT_THAT(
      config_error([] { parse_text_config("sampler { hmc { metric: DIAG } }", "t.pbtxt"); }),
      HasSubstr("t.pbtxt:1:30: sampler.hmc.metric: Unknown enumeration value of \"DIAG\" for field "
                "\"metric\". Valid values: METRIC_UNSPECIFIED, UNIT, DIAGONAL, DENSE."));
  EXPECT_THAT(
      config_error([] { parse_text_config("target { mixture { preset: KOU } }", "t.pbtxt"); }),
      HasSubstr("Valid values: PRESET_UNSPECIFIED, BIMODAL_1D, KOU_A, KOU_B"));
}

TEST(LoadConfigErrors, ReportsEveryErrorProtobufReports) {
  // The tokenizer reports both bad characters; the parser then stops at the first bad token.
  const std::string msg = config_error([] { parse_text_config("name: \"a\\q\"\niterations: 0x\n", "m.pbtxt"); });
  EXPECT_THAT(msg, HasSubstr("m.pbtxt:1:"));
  EXPECT_THAT(msg, HasSubstr("m.pbtxt:2:"));
}

// ---- binary format -----------------------------------------------------------------------------

TEST(LoadConfig, ReadsBinaryConfigs) {
  TempDir dir;
  const auto text = load_config(fixture("nuts.pbtxt"));
  const auto p = dir.write("nuts.pb", text.config.SerializeAsString());
  const auto c = load_config(p);
  EXPECT_EQ(c.config.SerializeAsString(), text.config.SerializeAsString());
  // No locations in binary configs: every field is just "file.pb".
  EXPECT_EQ(c.source.where("sampler.nuts.step_size"), p.string());
  EXPECT_EQ(c.source.location("sampler.nuts.step_size").line, 0);
}

TEST(LoadConfigErrors, BinaryGarbageIsNotAValidRunConfig) {
  TempDir dir;
  const auto p = dir.write("junk.pb", std::string("\xff\xff\xff\xff\x0f garbage", 13));
  const std::string msg = config_error([&] { load_config(p); });
  EXPECT_THAT(msg, HasSubstr(p.string()));
  EXPECT_THAT(msg, HasSubstr("not a valid binary RunConfig"));
}

TEST(LoadConfigErrors, BinaryWithUnknownFieldNumbersIsRefused) {
  // Field 99 (varint 5) parses as wire format but is not in the schema; nested in `sampler` too.
  TempDir dir;
  const std::string top = std::string("\x98\x06\x05", 3);              // tag (99 << 3 | 0) = 792
  const std::string nested = std::string("\x1a\x03", 2) + top;          // sampler (3) { 99: 5 }
  const auto p = dir.write("newer.pb", top + nested);
  const std::string msg = config_error([&] { load_config(p); });
  EXPECT_THAT(msg, HasSubstr("not a valid binary RunConfig"));
  EXPECT_THAT(msg, HasSubstr("(top level): unknown field number 99"));
  EXPECT_THAT(msg, HasSubstr("sampler: unknown field number 99"));
}

TEST(LoadConfigErrors, TextConfigNamedPbIsRefused) {
  TempDir dir;
  const auto p = dir.write("text.pb", "target { gaussian { mean: 1 } }\n");
  EXPECT_THAT(config_error([&] { load_config(p); }), HasSubstr("not a valid binary RunConfig"));
}

// ---- files -------------------------------------------------------------------------------------

TEST(LoadConfigErrors, UnknownExtensionListsTheAcceptedOnes) {
  const std::string msg = config_error([] { load_config("run.yaml"); });
  EXPECT_THAT(msg, HasSubstr("run.yaml"));
  EXPECT_THAT(msg, HasSubstr("unknown extension '.yaml'"));
  for (const char* ext : {".pbtxt", ".textproto", ".txtpb", ".pb"}) EXPECT_THAT(msg, HasSubstr(ext));
  EXPECT_THAT(config_error([] { load_config("no_extension"); }), HasSubstr("unknown extension ''"));
}

TEST(LoadConfigErrors, MissingFileGivesStrerror) {
  const std::string msg = config_error([] { load_config("/nonexistent/dir/run.pbtxt"); });
  EXPECT_THAT(msg, HasSubstr("cannot read config '/nonexistent/dir/run.pbtxt'"));
  EXPECT_THAT(msg, HasSubstr("No such file or directory"));
}

TEST(LoadConfigErrors, DirectoryGivesStrerror) {
  TempDir dir;
  std::filesystem::create_directory(dir.path() / "d.pbtxt");
  EXPECT_THAT(config_error([&] { load_config(dir.path() / "d.pbtxt"); }), HasSubstr("Is a directory"));
}

TEST(LoadConfigErrors, UnreadableFileGivesStrerror) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads files whatever their permissions";
  TempDir dir;
  const auto p = dir.write("secret.pbtxt", "iterations: 1\n");
  ::chmod(p.c_str(), 0);
  EXPECT_THAT(config_error([&] { load_config(p); }), HasSubstr("Permission denied"));
}

TEST(LoadConfigErrors, ReadFailureGivesStrerror) {
  // Reading /proc/self/mem at offset 0 fails with EIO, for root too.
  TempDir dir;
  const auto link = dir.path() / "mem.pbtxt";
  std::filesystem::create_symlink("/proc/self/mem", link);
  const std::string msg = config_error([&] { load_config(link); });
  EXPECT_THAT(msg, HasSubstr("cannot read config '" + link.string() + "'"));
  EXPECT_THAT(msg, HasSubstr("Input/output error"));
}

}  // namespace
}  // namespace pemc::config
