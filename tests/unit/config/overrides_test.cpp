// Command-line overrides: --set of every scalar kind, each error, the dedicated flags, --seeds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config_test_support.hpp"

namespace pemc::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::config_error;

pemc::v1::RunConfig base() {
  return parse_text_config(
             "target { gaussian { mean: [0, 0] } }\n"
             "sampler { hmc { step_size: 0.2 n_leapfrog: 10 } }\n"
             "iterations: 100\n"
             "seeds { values: [1, 2, 3] }\n",
             "base.pbtxt")
      .config;
}

TEST(SetOverride, EveryScalarKind) {
  auto c = base();
  EXPECT_EQ(apply_set_override(c, "sampler.hmc.step_size=0.05"), "sampler.hmc.step_size");  // double
  EXPECT_DOUBLE_EQ(c.sampler().hmc().step_size(), 0.05);
  apply_set_override(c, "sampler.hmc.n_leapfrog=-3");  // int32 (range is validate()'s job)
  EXPECT_EQ(c.sampler().hmc().n_leapfrog(), -3);
  apply_set_override(c, "iterations=5000000000");  // int64
  EXPECT_EQ(c.iterations(), 5000000000);
  apply_set_override(c, "seeds.base=18446744073709551615");  // uint64
  EXPECT_EQ(c.seeds().base(), 18446744073709551615u);
  apply_set_override(c, "sampler.hmc.jitter_step_size=true");  // bool
  EXPECT_TRUE(c.sampler().hmc().jitter_step_size());
  apply_set_override(c, "sampler.hmc.jitter_step_size=0");
  EXPECT_FALSE(c.sampler().hmc().jitter_step_size());
  apply_set_override(c, "output.path=x y.pemc");  // string, verbatim
  EXPECT_EQ(c.output().path(), "x y.pemc");
  apply_set_override(c, "name=");  // empty string is a value
  EXPECT_EQ(c.name(), "");
  apply_set_override(c, "sampler.hmc.metric=DENSE");  // enum by name
  EXPECT_EQ(c.sampler().hmc().metric(), pemc::v1::DENSE);
  apply_set_override(c, " warmup = 12 ");  // spaces around path and number
  EXPECT_EQ(c.warmup(), 12);
  apply_set_override(c, "sampler.hmc.step_size=1e-3");
  EXPECT_DOUBLE_EQ(c.sampler().hmc().step_size(), 1e-3);
  apply_set_override(c, "target.box_lower=+2.5");
  EXPECT_DOUBLE_EQ(c.target().box_lower(), 2.5);
}

struct BadSet {
  std::string assignment;
  std::vector<std::string> expected;  // substrings of the message
};

TEST(SetOverride, CreatesIntermediateMessagesAndSelectsUnsetOneofBranches) {
  pemc::v1::RunConfig c;  // no target, sampler or init yet: a --set may choose them
  apply_set_override(c, "target.banana.b=0.2");
  ASSERT_TRUE(c.target().has_banana());
  EXPECT_DOUBLE_EQ(c.target().banana().b(), 0.2);
  EXPECT_FALSE(c.target().banana().has_v());
  apply_set_override(c, "target.banana.v=3");  // the same branch again
  EXPECT_DOUBLE_EQ(c.target().banana().v(), 3);
  apply_set_override(c, "sampler.nuts.adaptation.target_accept=0.9");
  ASSERT_TRUE(c.sampler().has_nuts());
  EXPECT_DOUBLE_EQ(c.sampler().nuts().adaptation().target_accept(), 0.9);
  apply_set_override(c, "init.uniform_radius=3");
  EXPECT_DOUBLE_EQ(c.init().uniform_radius(), 3);
  auto b = base();
  apply_set_override(b, "target.box_lower=-4");  // a proto3 optional is not a oneof to respect
  EXPECT_TRUE(b.target().has_gaussian());
}

// Issue 29, item 3: a path into a oneof member other than the configured one is refused, naming the
// configured member, and the config is left as it was (switching would silently turn a Gaussian
// into a banana, or a pseudo-extended sampler into plain NUTS).
TEST(SetOverride, NeverSwitchesAOneof) {
  const std::vector<BadSet> cases = {
      {"target.banana.b=0.2",
       {"target.banana: the config's target is gaussian, not banana (target.kind is a oneof; --set "
        "never "
        "switches one, as that would replace the configured target: edit the config to change "
        "it)"}},
      {"sampler.nuts.step_size=0.05", {"sampler.nuts: the config's sampler is hmc, not nuts"}},
      {"sampler.pseudo_extended.n_pseudo=4", {"the config's sampler is hmc, not pseudo_extended"}},
  };
  for (const auto& bad : cases) {
    auto c = base();
    c.mutable_init()->set_uniform_radius(2);
    const std::string before = c.SerializeAsString();
    try {
      apply_set_override(c, bad.assignment);
      ADD_FAILURE() << bad.assignment << " was applied";
    } catch (const OneofMismatch& e) {
      EXPECT_THAT(e.what(), HasSubstr("--set '" + bad.assignment + "': ")) << bad.assignment;
      for (const auto& f : bad.expected) EXPECT_THAT(e.what(), HasSubstr(f)) << bad.assignment;
    }
    EXPECT_EQ(c.SerializeAsString(), before) << bad.assignment;
  }
  // init is a oneof too.
  auto boxed = base();
  boxed.mutable_init()->mutable_uniform_box()->add_upper(10);
  const std::string boxed_before = boxed.SerializeAsString();
  EXPECT_THAT(config_error([&] { apply_set_override(boxed, "init.uniform_radius=3"); }),
              HasSubstr("init.uniform_radius: the config's init is uniform_box, not uniform_radius"));
  EXPECT_EQ(boxed.SerializeAsString(), boxed_before);
  auto radius = base();
  radius.mutable_init()->set_uniform_radius(2);
  EXPECT_THAT(config_error([&] { apply_set_override(radius, "init.uniform_box.lower=[0, 1]"); }),
              HasSubstr("init.uniform_box: the config's init is uniform_radius, not uniform_box"));
  // Inside a pseudo-extended sampler the inner kernel is a oneof too; the message points at the
  // path that reaches the field in the configured member.
  auto pe = parse_text_config(
                "sampler { pseudo_extended { n_pseudo: 5 nuts { step_size: 0.1 } } }\n", "pe.pbtxt")
                .config;
  try {
    apply_set_override(pe, "sampler.nuts.step_size=0.05");
    ADD_FAILURE() << "switched pseudo_extended to nuts";
  } catch (const OneofMismatch& e) {
    EXPECT_THAT(e.what(), HasSubstr("the config's sampler is pseudo_extended, not nuts"));
    EXPECT_THAT(e.what(), HasSubstr("did you mean sampler.pseudo_extended.nuts.step_size?"));
    EXPECT_EQ(e.reason(), "its sampler is pseudo_extended, not nuts");
  }
  EXPECT_THAT(
      config_error([&] { apply_set_override(pe, "sampler.pseudo_extended.hmc.step_size=0.05"); }),
      HasSubstr(
          "sampler.pseudo_extended.hmc: the config's sampler.pseudo_extended is nuts, not hmc"));
  apply_set_override(pe, "sampler.pseudo_extended.nuts.step_size=0.05");
  EXPECT_DOUBLE_EQ(pe.sampler().pseudo_extended().nuts().step_size(), 0.05);
  // sampler.hmc.* on a pseudo-extended run (as on the quickstart): the message is about the
  // sampler, not about a missing n_leapfrog of an hmc block the override would create.
  auto again =
      parse_text_config("sampler { pseudo_extended { n_pseudo: 5 nuts { step_size: 0.1 } } }\n",
                        "pe.pbtxt")
          .config;
  EXPECT_THAT(config_error([&] { apply_set_override(again, "sampler.hmc.step_size=0.05"); }),
              HasSubstr("the config's sampler is pseudo_extended, not hmc"));
}

// A run of a study skips an override that does not fit it (the runner says which runs it reached).
TEST(ApplyOverrides, StudyRunsSkipOverridesIntoOtherOneofMembers) {
  auto c = parse_text_config(
      "sampler { pseudo_extended { n_pseudo: 5 nuts { step_size: 0.1 } } }\niterations: 5\n",
      "pe.pbtxt");
  CommandLineOverrides o;
  o.sets = {"sampler.nuts.step_size=0.05", "iterations=7"};
  const auto skipped = apply_overrides(c, o, /*skip_oneof_mismatches=*/true);
  ASSERT_EQ(skipped.size(), 2u);
  EXPECT_EQ(skipped[0], "its sampler is pseudo_extended, not nuts");
  EXPECT_EQ(skipped[1], "");
  EXPECT_TRUE(c.config.sampler().has_pseudo_extended());
  EXPECT_EQ(c.config.iterations(), 7);
  EXPECT_THROW(apply_overrides(c, o), OneofMismatch);
}

TEST(SetOverride, RepeatedScalarFieldsTakeWholeLists) {
  auto c = base();
  c.mutable_seeds()->add_values(7);
  apply_set_override(c, "seeds.values=[3, 4 ,5]");
  EXPECT_THAT(std::vector<std::uint64_t>(c.seeds().values().begin(), c.seeds().values().end()),
              ElementsAre(3u, 4u, 5u));
  apply_set_override(c, "seeds.values=9");  // one value is a list of one
  EXPECT_THAT(std::vector<std::uint64_t>(c.seeds().values().begin(), c.seeds().values().end()),
              ElementsAre(9u));
  apply_set_override(c, "seeds.values=[]");
  EXPECT_EQ(c.seeds().values_size(), 0);
  auto boxed = base();
  boxed.mutable_init()->mutable_uniform_box()->add_lower(0);
  apply_set_override(boxed, "init.uniform_box.lower=[-1, 2.5]");
  EXPECT_THAT(std::vector<double>(boxed.init().uniform_box().lower().begin(),
                                  boxed.init().uniform_box().lower().end()),
              ElementsAre(-1.0, 2.5));
  // A bad element leaves the old list in place.
  const std::string before = boxed.SerializeAsString();
  EXPECT_THROW(apply_set_override(boxed, "init.uniform_box.lower=[1, nope]"), ConfigError);
  EXPECT_EQ(boxed.SerializeAsString(), before);
}

TEST(SetOverride, InfAndNanParseForValidateToReject) {
  auto c = base();
  apply_set_override(c, "sampler.hmc.step_size=inf");
  EXPECT_TRUE(std::isinf(c.sampler().hmc().step_size()));
  apply_set_override(c, "sampler.hmc.step_size=nan");
  EXPECT_TRUE(std::isnan(c.sampler().hmc().step_size()));
}

TEST(SetOverride, EachErrorNamesTheOverrideAndLeavesTheConfigUnchanged) {
  const std::vector<BadSet> cases = {
      {"sampler.hmc.step_size", {"missing '='"}},
      {"sampler.hmc.stepsize=1", {"unknown field 'stepsize' at 'sampler.hmc'", "valid fields: step_size, n_leapfrog"}},
      {"sampler.bogus.x=1", {"unknown field 'bogus' at 'sampler'", "valid fields: hmc, nuts, rwm, mala"}},
      {"iteration=1", {"unknown field 'iteration' at the top level", "iterations"}},
      {"sampler.hmc.step_size.x=1", {"'sampler.hmc.step_size' is a double, not a message"}},
      {"run_files=a.pbtxt", {"'run_files' is a repeated field (string)", "edit the config file"}},
      {"seeds.values=[1, x]", {"seeds.values: value 'x' is not an integer"}},
      {"seeds.values=[1,,2]", {"seeds.values: empty element in the list '[1,,2]'"}},
      {"seeds.values=[1, 2", {"seeds.values: a list is written [a, b, ...] (got '[1, 2')"}},
      {"seeds.values=1]", {"a list is written [a, b, ...]"}},
      {"seeds.values[0]=3", {"unknown field 'values[0]'", "repeated elements cannot be set"}},
      {"target.mixture.components.weight=1", {"'target.mixture.components' is a repeated field"}},
      {"sampler.hmc=1", {"'sampler.hmc' is a message", "set one of its fields: step_size"}},
      {"sampler..hmc=1", {"empty field name"}},
      {"=1", {"missing field path"}},
      {"sampler.hmc.step_size=abc", {"sampler.hmc.step_size: value 'abc' is not a number"}},
      {"sampler.hmc.step_size=", {"value '' is not a number"}},
      {"sampler.hmc.step_size=1.5x", {"value '1.5x' is not a number"}},
      {"sampler.hmc.n_leapfrog=3.5", {"sampler.hmc.n_leapfrog: value '3.5' is not an integer", "int32"}},
      {"sampler.hmc.n_leapfrog=3000000000", {"out of range", "2147483647"}},
      {"iterations=1e6", {"value '1e6' is not an integer"}},
      {"seeds.base=-1", {"negative but the field is unsigned"}},
      {"sampler.hmc.jitter_step_size=yes", {"'yes' is not a bool"}},
      {"sampler.hmc.metric=SPARSE", {"'SPARSE' is not a value of pemc.v1.MetricKind", "UNIT, DIAGONAL, DENSE"}},
      {"sampler.hmc.step_size=1e999", {"out of range for a double"}},
  };
  for (const auto& bad : cases) {
    auto c = base();
    const std::string before = c.SerializeAsString();
    const std::string msg = config_error([&] { apply_set_override(c, bad.assignment); });
    EXPECT_THAT(msg, HasSubstr("--set '" + bad.assignment + "'")) << bad.assignment;
    for (const auto& e : bad.expected) EXPECT_THAT(msg, HasSubstr(e)) << bad.assignment;
    EXPECT_EQ(c.SerializeAsString(), before) << bad.assignment;
  }
}

TEST(ApplyOverrides, DedicatedFlagsAndSourceOrigins) {
  auto c = parse_text_config("iterations: 100\nwarmup: 10\nseeds { count: 4 }\noutput { path: \"a.pemc\" }\n",
                             "run.pbtxt");
  CommandLineOverrides o;
  o.output = "b.pemc";
  o.iterations = 7;
  o.warmup = 3;
  o.sets = {"sampler.hmc.step_size=0.3"};
  apply_overrides(c, o);
  EXPECT_EQ(c.config.output().path(), "b.pemc");
  EXPECT_EQ(c.config.iterations(), 7);
  EXPECT_EQ(c.config.warmup(), 3);
  EXPECT_DOUBLE_EQ(c.config.sampler().hmc().step_size(), 0.3);
  EXPECT_EQ(c.source.where("output.path"), "command line (--output b.pemc)");
  EXPECT_EQ(c.source.where("iterations"), "command line (--iterations 7)");
  EXPECT_EQ(c.source.where("warmup"), "command line (--warmup 3)");
  EXPECT_EQ(c.source.where("sampler.hmc.step_size"), "command line (--set sampler.hmc.step_size=0.3)");
  EXPECT_EQ(c.source.where("seeds.count"), "run.pbtxt:3:9");  // untouched fields keep their location
}

TEST(ApplyOverrides, DedicatedFlagsWinOverSet) {
  auto c = parse_text_config("iterations: 100\n", "run.pbtxt");
  CommandLineOverrides o;
  o.sets = {"iterations=5", "iterations=6"};
  apply_overrides(c, o);
  EXPECT_EQ(c.config.iterations(), 6);  // sets apply in order
  o.iterations = 9;
  apply_overrides(c, o);
  EXPECT_EQ(c.config.iterations(), 9);
  EXPECT_EQ(c.source.where("iterations"), "command line (--iterations 9)");
}

TEST(ApplyOverrides, ValidationErrorsPointAtTheCommandLine) {
  testing::TempDir dir;
  auto c = load_config(testing::fixture("gaussian_hmc.pbtxt"));
  CommandLineOverrides o;
  o.output = (dir.path() / "out.pemc").string();
  o.sets = {"sampler.hmc.step_size=-1"};
  apply_overrides(c, o);
  apply_defaults(c);
  const std::string msg = config_error([&] { validate(c); });
  EXPECT_THAT(msg, HasSubstr("command line (--set sampler.hmc.step_size=-1): sampler.hmc.step_size: must be > 0 (got -1)"));
}

TEST(ApplyOverrides, MessagesCreatedBySetPointAtTheCommandLine) {
  auto c = parse_text_config("target {\n  box_lower: -5\n}\n", "run.pbtxt");
  CommandLineOverrides o;
  o.sets = {"target.banana.b=0.2"};
  apply_overrides(c, o);
  EXPECT_EQ(c.source.where("target.banana.v"), "command line (--set target.banana.b=0.2)");
  EXPECT_EQ(c.source.where("target.box_upper"),
            "run.pbtxt:1:1");  // `target` itself is from the file
}

TEST(ApplyOverrides, SeedsSelectsTheFirstKValues) {
  auto c = parse_text_config("seeds { values: [5, 9, 2, 7] }\n", "s.pbtxt");
  CommandLineOverrides o;
  o.seeds = 2;
  apply_overrides(c, o);
  EXPECT_THAT(expand_seeds(c.config), ElementsAre(5u, 9u));
}

TEST(ApplyOverrides, SeedsMoreThanTheValuesIsAnError) {
  auto c = parse_text_config("seeds {\n values: [5, 9] }\n", "s.pbtxt");
  CommandLineOverrides o;
  o.seeds = 3;
  const std::string msg = config_error([&] { apply_overrides(c, o); });
  EXPECT_THAT(msg, HasSubstr("--seeds 3"));
  EXPECT_THAT(msg, HasSubstr("lists only 2 seed value(s) at s.pbtxt:2:2"));
}

TEST(ApplyOverrides, SeedsFromBaseAndCount) {
  auto c = parse_text_config("seeds { base: 40 count: 2 }\n", "s.pbtxt");
  CommandLineOverrides o;
  o.seeds = 5;  // more than the config's count is fine: they are generated
  apply_overrides(c, o);
  EXPECT_THAT(expand_seeds(c.config), ElementsAre(40u, 41u, 42u, 43u, 44u));
  EXPECT_EQ(c.source.where("seeds.count"), "command line (--seeds 5)");
  o.seeds = 1;
  apply_overrides(c, o);
  EXPECT_THAT(expand_seeds(c.config), ElementsAre(40u));
}

TEST(ApplyOverrides, SeedsMustBePositive) {
  auto c = parse_text_config("seeds { count: 2 }\n", "s.pbtxt");
  CommandLineOverrides o;
  o.seeds = 0;
  EXPECT_THAT(config_error([&] { apply_overrides(c, o); }), HasSubstr("--seeds 0: the number of seeds must be >= 1"));
}

TEST(ApplyOverrides, BadSetNamesTheOverride) {
  auto c = parse_text_config("iterations: 1\n", "s.pbtxt");
  CommandLineOverrides o;
  o.sets = {"iterations=2", "sampler.hmc.step=1"};
  EXPECT_THAT(config_error([&] { apply_overrides(c, o); }), HasSubstr("--set 'sampler.hmc.step=1': unknown field 'step'"));
}

TEST(ExpandSeeds, ValuesOrBaseCount) {
  pemc::v1::RunConfig c;
  EXPECT_TRUE(expand_seeds(c).empty());
  c.mutable_seeds()->set_base(10);
  c.mutable_seeds()->set_count(3);
  EXPECT_THAT(expand_seeds(c), ElementsAre(10u, 11u, 12u));
  c.mutable_seeds()->add_values(99);
  EXPECT_THAT(expand_seeds(c), ElementsAre(99u));  // explicit values take precedence
}

}  // namespace
}  // namespace pemc::config
