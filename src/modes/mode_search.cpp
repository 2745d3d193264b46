#include "modes/mode_search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>

#include "core/error.hpp"
#include "modes/laplace.hpp"
#include "rng/stream.hpp"

namespace pemc::modes {
namespace {

// Student's t with 3 degrees of freedom: z / sqrt(chi^2_3 / 3).
double student_t3(rng::Stream& stream) {
  const double z = stream.normal();
  double chi2 = 0.0;
  for (int k = 0; k < 3; ++k) {
    const double g = stream.normal();
    chi2 += g * g;
  }
  return z / std::sqrt(chi2 / 3.0);
}

// Is optimum x this mode? (See the header: Mahalanobis distance under the mode's Hessian.)
bool same_mode(const Mode& m, const Vector& x, double merge_distance) {
  // (x - m)' H (x - m) = |R' (x - m)|^2 with H = R R'.
  const Vector z = m.hessian_cholesky.transpose().triangularView<Eigen::Upper>() * (x - m.location);
  return z.squaredNorm() <= merge_distance * merge_distance;
}

// Does a stalled start's point pass the Newton test (header)? H = L L', so g' H^-1 g = |L^-1 g|^2.
bool near_optimum(const targets::Target& f, const StartResult& r, const Eigen::LLT<Matrix>& llt,
                  std::int64_t& n_gradient_evals) {
  Vector g(r.x.size());
  ++n_gradient_evals;
  try {
    f.potential_and_gradient(r.x, g);
  } catch (const std::exception&) {
    return false;
  }
  if (!g.allFinite()) return false;
  const Vector z = llt.matrixL().solve(g);
  return z.norm() <= kStalledOptimumDistance;
}

// What a converged (or stalled) optimum that is no known mode turns out to be.
struct NewOptimum {
  enum class Kind { kMode, kDegenerate, kNotAnOptimum } kind = Kind::kDegenerate;
  Mode mode;  // for kMode
};

// A new mode at a converged optimum with its Laplace fit; degenerate when the Hessian there is
// not positive definite or the target fails next to it; not an optimum when the start stalled and
// its point is not shown to be a mode (a positive definite Hessian and the Newton test).
NewOptimum new_optimum(const targets::Target& f, const ModeSearchSettings& s,
                       const StartResult& r, std::int64_t& n_gradient_evals) {
  NewOptimum out;
  // A stalled start's point is an optimum only when the Newton test says so.
  if (r.outcome == StartResult::Outcome::kStalled) out.kind = NewOptimum::Kind::kNotAnOptimum;
  Matrix h;
  try {
    h = finite_difference_hessian(f, r.x, s.hessian_step);
  } catch (const std::exception&) {
    return out;
  }
  n_gradient_evals += 2 * static_cast<std::int64_t>(r.x.size());
  if (!h.allFinite()) return out;
  Eigen::LLT<Matrix> llt(h);
  if (llt.info() != Eigen::Success) return out;
  if (r.outcome == StartResult::Outcome::kStalled && !near_optimum(f, r, llt, n_gradient_evals))
    return out;
  const auto fit = laplace_fit_from_hessian(r.x, r.potential, h);
  Mode& m = out.mode;
  m.location = r.x;
  m.log_density = -r.potential;
  m.n_starts = 1;
  m.first_start = r.index;
  m.log_mass = fit.log_evidence;
  m.covariance = fit.covariance;
  m.hessian_cholesky = llt.matrixL();
  out.kind = NewOptimum::Kind::kMode;
  return out;
}

void sort_modes(ModeSet& set) {
  std::stable_sort(set.modes.begin(), set.modes.end(), [](const Mode& a, const Mode& b) {
    if (a.log_mass != b.log_mass) return a.log_mass > b.log_mass;
    return a.first_start < b.first_start;
  });
}

void count_degenerate(const StartResult& r, ModeSet& set) {
  ++set.n_degenerate;
  const double lp = -r.potential;
  if (!(lp <= set.best_degenerate_log_density)) set.best_degenerate_log_density = lp;
}

}  // namespace

double good_turing_unseen(const ModeSet& set) {
  const int reached = set.n_converged - set.n_degenerate;
  if (reached == 0) return 1.0;
  const auto shares = set.laplace_shares();
  int singletons = 0;
  for (std::size_t k = 0; k < set.modes.size(); ++k)
    singletons += set.modes[k].n_starts == 1 && shares[k] >= kNegligibleModeShare;
  return static_cast<double>(singletons) / static_cast<double>(reached);
}

Vector start_point(const ModeSearchSettings& s, int dim, int index) {
  rng::Stream stream(s.seed, rng::Domain::kModeSearch, static_cast<std::uint64_t>(index), 0);
  Vector x(dim);
  const bool boxed = s.box_lower && s.box_upper;
  // Odd starts spread kWideStartFactor times wider: a light mode far from the others has a basin
  // that scale-init_scale starts almost never reach (a 3 % component 20 sd away: about 1 start in
  // 170), and a wider half finds it in the first batch without moving the other half.
  const double scale = index % 2 == 1 ? kWideStartFactor * s.init_scale : s.init_scale;
  for (int i = 0; i < dim; ++i) {
    if (boxed)
      x[i] = *s.box_lower + (*s.box_upper - *s.box_lower) * stream.uniform();
    else
      x[i] = scale * student_t3(stream);
  }
  return x;
}

StartResult run_start(const targets::Target& f, const ModeSearchSettings& s, int index) {
  StartResult r;
  r.index = index;
  const Vector x0 = start_point(s, f.dim(), index);
  try {
    auto opt = minimize_lbfgs(f, x0, s.lbfgs);
    r.n_gradient_evals = opt.n_gradient_evals;
    if (!std::isfinite(opt.value) || !opt.x.allFinite()) return r;
    r.outcome = opt.converged ? StartResult::Outcome::kConverged
                : opt.stalled ? StartResult::Outcome::kStalled
                              : StartResult::Outcome::kNotConverged;
    r.x = std::move(opt.x);
    r.potential = opt.value;
  } catch (const std::exception&) {
    r.outcome = StartResult::Outcome::kNonFinite;  // not finite at x0, or the target threw
    r.x.resize(0);
  }
  return r;
}

BatchRunner serial_batches(const targets::Target& f, const ModeSearchSettings& s) {
  return [&f, s](int first, int count) {
    std::vector<StartResult> out;
    out.reserve(static_cast<std::size_t>(count));
    for (int i = first; i < first + count; ++i) out.push_back(run_start(f, s, i));
    return out;
  };
}

void add_batch(const targets::Target& f, const ModeSearchSettings& s,
               std::vector<StartResult> batch, ModeSet& set) {
  std::sort(batch.begin(), batch.end(),
            [](const StartResult& a, const StartResult& b) { return a.index < b.index; });
  for (const auto& r : batch) {
    ++set.n_starts;
    set.n_gradient_evals += r.n_gradient_evals;
    if (r.outcome == StartResult::Outcome::kNonFinite) {
      ++set.n_nonfinite;
      continue;
    }
    if (r.outcome == StartResult::Outcome::kNotConverged) {
      ++set.n_not_converged;
      continue;
    }
    auto found = std::find_if(set.modes.begin(), set.modes.end(),
                              [&](const Mode& m) { return same_mode(m, r.x, s.merge_distance); });
    if (found != set.modes.end()) {
      ++set.n_converged;
      ++found->n_starts;
      continue;
    }
    auto optimum = new_optimum(f, s, r, set.n_gradient_evals);
    switch (optimum.kind) {
      case NewOptimum::Kind::kMode:
        ++set.n_converged;
        set.modes.push_back(std::move(optimum.mode));
        break;
      case NewOptimum::Kind::kDegenerate:
        ++set.n_converged;
        count_degenerate(r, set);
        break;
      case NewOptimum::Kind::kNotAnOptimum:
        ++set.n_not_converged;
        break;
    }
  }
  set.unseen_probability = good_turing_unseen(set);
}

ModeSet search_modes(const targets::Target& f, const ModeSearchSettings& s,
                     const BatchRunner& run_batch) {
  if (s.batch_starts < 1 || s.max_starts < s.batch_starts)
    throw ConfigError("mode search: need 1 <= batch_starts <= max_starts");
  const auto t0 = std::chrono::steady_clock::now();
  ModeSet set;
  set.dim = f.dim();
  set.seed = s.seed;
  while (set.n_starts < s.max_starts) {
    const int count = std::min(s.batch_starts, s.max_starts - set.n_starts);
    add_batch(f, s, run_batch(set.n_starts, count), set);
    if (!set.modes.empty() && set.unseen_probability <= s.unseen_probability) {
      set.complete = true;
      break;
    }
  }
  sort_modes(set);
  set.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return set;
}

}  // namespace pemc::modes
