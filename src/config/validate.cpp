#include "config/validate.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <unordered_map>

#include "config/created_files.hpp"
#include "config/file_checks.hpp"
#include "config/finite_and_enum_checks.hpp"
#include "config/init_point.hpp"
#include "config/modes.hpp"
#include "config/sampler_kinds.hpp"
#include "config/target_kinds.hpp"
#include "core/error.hpp"

namespace pemc::config {

namespace {

// Lines of one ConfigError; the rest are counted.
constexpr std::size_t kMaxReportedProblems = 100;

// ---- targets: each kind's rules are in its row (target_kinds.hpp) ------------------------------
void check_target(const v1::RunConfig& cfg, Problems& p) {
  if (!cfg.has_target() || cfg.target().kind_case() == v1::TargetConfig::KIND_NOT_SET) {
    p.add("target", "required: set one of " + oneof_names(v1::TargetConfig::descriptor()));
    return;
  }
  const auto& t = cfg.target();
  if (t.has_box_lower() && t.has_box_upper() && !(t.box_lower() < t.box_upper())) {
    p.add("target.box_upper", "box_lower must be < box_upper",
          "box_lower " + num(t.box_lower()) + ", box_upper " + num(t.box_upper()));
  }
  if (const auto* kind = find_target_kind(t.kind_case())) kind->validate(t, p);
}

// ---- samplers: each kind's rules are in its row (sampler_kinds.hpp) ----------------------------
void check_sampler(const v1::RunConfig& cfg, std::optional<std::int64_t> dim, Problems& p) {
  if (!cfg.has_sampler() || cfg.sampler().kind_case() == v1::SamplerConfig::KIND_NOT_SET) {
    p.add("sampler", "required: set one of " + oneof_names(v1::SamplerConfig::descriptor()));
    return;
  }
  if (const auto* kind = find_sampler_kind(cfg.sampler().kind_case())) kind->validate(cfg, dim, p);
}

// ---- run-level fields -------------------------------------------------------------------------
void check_seeds(const v1::RunConfig& cfg, Problems& p) {
  const auto& s = cfg.seeds();
  const bool values = s.values_size() > 0;
  if (values && s.count() != 0) {
    p.add("seeds.count", "give either seeds.values or seeds.base/count, not both",
          num(std::int64_t{s.count()}));
  }
  if (values && s.base() != 0) {
    p.add("seeds.base", "give either seeds.values or seeds.base/count, not both", std::to_string(s.base()));
  }
  if (!values && s.count() == 0) {
    p.add("seeds", "required: seeds.values (explicit seeds) or seeds.count >= 1 (base, base+1, ...)");
  }
  if (!values && s.count() < 0) p.add("seeds.count", "must be >= 1", num(std::int64_t{s.count()}));
  if (s.count() > kMaxSeeds) p.add("seeds.count", "more seeds than the limit " + num(kMaxSeeds), num(std::int64_t{s.count()}));
  if (s.values_size() > kMaxSeeds) {
    p.add("seeds.values", "more seeds than the limit " + num(kMaxSeeds), entries(s.values_size()));
  }
  if (!values && s.count() > 0 &&
      s.base() > std::numeric_limits<std::uint64_t>::max() - static_cast<std::uint64_t>(s.count() - 1)) {
    p.add("seeds.base", "base + count - 1 overflows uint64 (seeds would repeat)", std::to_string(s.base()));
  }
  std::unordered_map<std::uint64_t, int> first;
  int reported = 0;
  for (int i = 0; i < s.values_size(); ++i) {
    const auto [it, inserted] = first.try_emplace(s.values(i), i);
    if (inserted) continue;
    if (++reported <= kMaxElementProblems) {
      p.add(el("seeds.values", i), "duplicate of seeds.values[" + std::to_string(it->second) +
                                       "] (chains would be identical)",
            std::to_string(s.values(i)));
    } else {
      p.add("seeds.values", "more duplicate seeds (only the first " +
                                std::to_string(kMaxElementProblems) + " are listed)");
      break;
    }
  }
}

void check_output(const v1::RunConfig& cfg, Problems& p) {
  const auto& o = cfg.output();
  if (o.path().empty()) {
    p.add("output.path", "required: the record file to write");
  } else {
    const std::filesystem::path file(o.path());
    std::error_code ec;
    std::filesystem::path dir = file.parent_path();
    if (dir.empty()) dir = ".";
    const std::string rel = file.is_relative() ? " (relative to the working directory " +
                                                     quoted(working_directory()) + ")"
                                               : "";
    const auto st = std::filesystem::status(file, ec);
    const auto dst = std::filesystem::status(dir, ec);
    if (std::filesystem::is_directory(st)) {
      p.add("output.path", "is a directory; give a file path inside it", quoted(o.path()));
    } else if (!std::filesystem::exists(dst)) {
      p.add("output.path", "directory " + quoted(dir.string()) + " does not exist" + rel,
            quoted(o.path()));
    } else if (!std::filesystem::is_directory(dst)) {
      p.add("output.path", quoted(dir.string()) + " is not a directory", quoted(o.path()));
    } else if (::access(dir.c_str(), W_OK | X_OK) != 0) {
      p.add("output.path",
            "directory " + quoted(dir.string()) + " is not writable: " + std::strerror(errno),
            quoted(o.path()));
    } else if (std::filesystem::exists(st) && ::access(file.c_str(), W_OK) != 0) {
      p.add("output.path", std::string("existing file is not writable: ") + std::strerror(errno),
            quoted(o.path()));
    }
  }
  if (o.has_thin() && o.thin() < 1) p.add("output.thin", "must be >= 1", num(std::int64_t{o.thin()}));
  if (o.has_flush_every() && o.flush_every() < 1) {
    p.add("output.flush_every", "must be >= 1", num(std::int64_t{o.flush_every()}));
  }
  if (o.estimates_every() < 0) {
    p.add("output.estimates_every", "must be >= 0 (0: no running estimates)",
          num(std::int64_t{o.estimates_every()}));
  }
}

// Each bound: one number for every coordinate (none = 0), or one per coordinate.
void check_uniform_box(const v1::InitConfig::Box& box, std::optional<std::int64_t> dim, Problems& p) {
  bool sizes_ok = true;
  for (const auto* bound : {&box.lower(), &box.upper()}) {
    const std::string field =
        std::string("init.uniform_box.") + (bound == &box.lower() ? "lower" : "upper");
    if (bound->size() <= 1) continue;
    if (dim && bound->size() != *dim) {
      p.add(field, "must have 1 entry (every coordinate) or " + entries(*dim) +
                       " (the target's dimension)", entries(bound->size()));
      sizes_ok = false;
    }
  }
  if (box.lower_size() > 1 && box.upper_size() > 1 && box.lower_size() != box.upper_size()) {
    if (sizes_ok)
      p.add("init.uniform_box.upper", "must have as many entries as lower (" +
                                           entries(box.lower_size()) + "), or 1",
            entries(box.upper_size()));
    sizes_ok = false;
  }
  if (!sizes_ok) return;
  const int n = std::max({1, box.lower_size(), box.upper_size()});
  for (int i = 0; i < n; ++i) {
    const double lo = box_bound(box.lower(), i), hi = box_bound(box.upper(), i);
    if (!(lo < hi)) {
      const auto bound = [&](const char* name) {
        const std::string field = std::string("init.uniform_box.") + name;
        return n == 1 ? field : el(field, i);
      };
      p.add_pair(bound("upper"), bound("lower"), "lower must be < upper",
                 "lower " + num(lo) + ", upper " + num(hi));
      return;
    }
  }
}

// A fixed initial point: the target's dimension, inside the target's box.
void check_init_point(const v1::RunConfig& cfg, std::optional<std::int64_t> dim, Problems& p) {
  const auto& x = cfg.init().point().x();
  if (x.empty()) {
    p.add("init.point.x", "required: the initial point's coordinates");
  } else if (dim && x.size() != *dim) {
    p.add("init.point.x", "must have " + entries(*dim) + " (the target's dimension)",
          entries(x.size()));
  } else if (cfg.has_target()) {
    const auto& t = cfg.target();
    for (int i = 0; i < x.size(); ++i) {
      if ((t.has_box_lower() && x[i] < t.box_lower()) || (t.has_box_upper() && x[i] > t.box_upper())) {
        p.add(el("init.point.x", i), "lies outside the target's box [box_lower, box_upper]", num(x[i]));
        return;
      }
    }
  }
}

void check_init(const v1::RunConfig& cfg, std::optional<std::int64_t> dim, Problems& p) {
  const auto& in = cfg.init();
  switch (in.kind_case()) {
    case v1::InitConfig::kUniformRadius:
      positive(p, "init.uniform_radius", in.uniform_radius());
      break;
    case v1::InitConfig::kUniformBox:
      check_uniform_box(in.uniform_box(), dim, p);
      break;
    case v1::InitConfig::kPoint:
      check_init_point(cfg, dim, p);
      break;
    case v1::InitConfig::KIND_NOT_SET:
      break;
  }
}

void check_run(const v1::RunConfig& cfg, Problems& p) {
  if (!cfg.has_iterations()) {
    p.add("iterations", "required: draws per chain after warmup (>= 1)");
  } else if (cfg.iterations() < 1) {
    p.add("iterations", "must be >= 1", num(cfg.iterations()));
  }
  if (cfg.has_warmup() && cfg.warmup() < 0) p.add("warmup", "must be >= 0", num(cfg.warmup()));
  // Beyond this the per-chain count warmup + iterations (and the run's total) could overflow.
  if (cfg.iterations() > kMaxIterations) {
    p.add("iterations", "more than the limit " + num(kMaxIterations), num(cfg.iterations()));
  } else if (cfg.iterations() >= 0 && cfg.warmup() > kMaxIterations - cfg.iterations()) {
    // Blamed on the larger of the two: the one that is out of proportion.
    const bool warmup = cfg.warmup() > cfg.iterations();
    p.add(warmup ? "warmup" : "iterations",
          "warmup + iterations is more than the limit " + num(kMaxIterations) + " (warmup " +
              num(cfg.warmup()) + ", iterations " + num(cfg.iterations()) + ")",
          num(warmup ? cfg.warmup() : cfg.iterations()));
  }
  check_seeds(cfg, p);
}

// Checkpoints (docs/checkpointing.md): periods >= 0 (0 = none); not onto the output.
void check_checkpoint(const v1::RunConfig& cfg, Problems& p) {
  if (cfg.checkpoint().every_seconds() < 0)
    p.add("checkpoint.every_seconds", "must be >= 0 (0: no periodic checkpoints)",
          num(cfg.checkpoint().every_seconds()));
  if (cfg.checkpoint().every_iterations() < 0)
    p.add("checkpoint.every_iterations", "must be >= 0 (0: no periodic checkpoints)",
          num(cfg.checkpoint().every_iterations()));
  if (!cfg.checkpoint().path().empty() && cfg.checkpoint().path() == cfg.output().path())
    p.add("checkpoint.path", "must differ from output.path (the record file)",
          cfg.checkpoint().path());
  check_created_files_distinct(cfg, p);
}

// The fields a study shares between its runs (Scope::kShared).
void check_output_and_checkpoint(const v1::RunConfig& cfg, Problems& p) {
  check_output(cfg, p);
  check_checkpoint(cfg, p);
}

// Chains per seed, and the run's totals: chains, and iterations over all chains.
void check_chain_counts(const v1::RunConfig& cfg, Problems& p) {
  in_range(p, "chains_per_seed", cfg.chains_per_seed(), 1, kMaxChainsPerSeed);
  const std::int64_t n_seeds = cfg.seeds().values_size() > 0 ? cfg.seeds().values_size() : cfg.seeds().count();
  if (n_seeds > 0 && cfg.chains_per_seed() > 0 &&
      n_seeds * std::int64_t{cfg.chains_per_seed()} > kMaxTotalChains) {
    p.add("chains_per_seed",
          "seeds x chains_per_seed = " + num(n_seeds * std::int64_t{cfg.chains_per_seed()}) +
              " chains, more than the limit " + num(kMaxTotalChains),
          num(std::int64_t{cfg.chains_per_seed()}));
  } else if (n_seeds > 0 && cfg.chains_per_seed() > 0 && cfg.iterations() > 0 && cfg.warmup() >= 0 &&
             static_cast<double>(n_seeds) * cfg.chains_per_seed() *
                     (static_cast<double>(cfg.warmup()) + static_cast<double>(cfg.iterations())) >
                 4e18) {
    p.add("iterations", "chains x (warmup + iterations) is more than 4e18 iterations in total",
          num(cfg.iterations()));
  }
}

// Where a problem's value came from: its field's location, or the command line when the other
// field of a pair was set there (a --set that made the pair wrong).
std::string where_problem(const SourceMap& source, const Problem& pr) {
  if (!pr.other_field.empty()) {
    const std::string other = source.where(pr.other_field);
    if (other.rfind("command line", 0) == 0) return other;
  }
  return source.where(pr.field_path);
}

}  // namespace

std::optional<std::int64_t> known_dimension(const v1::RunConfig& config) {
  const auto* kind = find_target_kind(config.target().kind_case());
  const std::int64_t d = kind && kind->dimension ? kind->dimension(config.target()) : 0;
  if (d < 1 || d > kMaxDimension) return std::nullopt;
  return d;
}

std::vector<Problem> find_problems(const LoadedConfig& c, Scope scope) {
  Problems p;
  const auto& cfg = c.config;
  if (scope == Scope::kShared) {
    check_output_and_checkpoint(cfg, p);
    return p.take();
  }
  check_finite_and_enums(cfg, "", p);
  const auto dim = known_dimension(cfg);
  check_target(cfg, p);
  check_sampler(cfg, dim, p);
  check_run(cfg, p);
  check_modes(cfg, p);
  check_init(cfg, dim, p);
  if (scope == Scope::kAll) check_output_and_checkpoint(cfg, p);
  if (cfg.logging().has_progress_interval_seconds()) {
    positive(p, "logging.progress_interval_seconds", cfg.logging().progress_interval_seconds());
  }
  check_chain_counts(cfg, p);
  return p.take();
}

std::vector<Problem> find_warnings(const LoadedConfig& c) {
  const auto* kind = find_sampler_kind(c.config.sampler().kind_case());
  if (!kind || !kind->warnings) return {};
  return kind->warnings(c.config, known_dimension(c.config));
}

void validate(const LoadedConfig& c, Scope scope) {
  if (scope != Scope::kShared)
    for (const auto& w : find_warnings(c))
      spdlog::warn("{}: {}: {}{}", c.source.where(w.field_path), w.field_path, w.reason,
                   w.value ? " (got " + *w.value + ")" : std::string());
  const auto problems = find_problems(c, scope);
  if (problems.empty()) return;
  std::string msg = "invalid config '" + c.path.string() + "': " + std::to_string(problems.size()) +
                    (problems.size() == 1 ? " problem" : " problems");
  for (std::size_t i = 0; i < problems.size() && i < kMaxReportedProblems; ++i) {
    const auto& pr = problems[i];
    msg += "\n  " + where_problem(c.source, pr) + ": " + pr.field_path + ": " + pr.reason;
    if (pr.value) msg += " (got " + *pr.value + ")";
  }
  if (problems.size() > kMaxReportedProblems) {
    msg += "\n  ... and " + std::to_string(problems.size() - kMaxReportedProblems) + " more";
  }
  throw ConfigError(msg);
}

}  // namespace pemc::config
