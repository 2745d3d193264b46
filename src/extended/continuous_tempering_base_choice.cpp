#include "extended/continuous_tempering_base_choice.hpp"

#include <fmt/format.h>

#include <boost/math/distributions/fisher_f.hpp>
#include <algorithm>
#include <cmath>

namespace pemc::extended {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMaxShiftZ = 3.0;

// The kKeepBaseConfidence point of F(nu1, nu2): how large a ratio of two variance estimates with
// these degrees of freedom gets from noise alone.
double f_quantile(double nu1, double nu2) {
  return boost::math::quantile(boost::math::fisher_f_distribution<double>(nu1, nu2),
                               kKeepBaseConfidence);
}

std::string origin_name(int origin) {
  return origin == kConfiguredBase ? std::string("the configured base")
                                   : fmt::format("the refit of round {}", origin);
}

}  // namespace

double BootstrapRoundQuality::variance_x_draws() const {
  if (!(log_z_se >= 0.0) || !std::isfinite(log_z_se) || draws <= 0) return kNaN;
  return log_z_se * log_z_se * static_cast<double>(draws);
}

double BootstrapRoundQuality::log_zeta_shift_z() const {
  const double s2 = log_z_se * log_z_se + log_zeta_se * log_zeta_se;
  if (!std::isfinite(s2) || !(s2 > 0.0) || !std::isfinite(log_z)) return kNaN;
  return (log_z - log_zeta) / std::sqrt(s2);
}

BootstrapBaseChoice choose_next_base(const std::vector<BootstrapRoundQuality>& rounds,
                                     double ratio) {
  BootstrapBaseChoice c;
  if (rounds.empty()) {
    c.reason = "no round finished";
    return c;
  }
  const auto& latest = rounds.back();
  const int k = latest.round + 1;  // 1-based, as logged

  const double z = latest.log_zeta_shift_z();
  if (std::isfinite(z) && std::fabs(z) > kMaxShiftZ)
    c.warning = fmt::format(
        "round {}'s log Z {:.6g} +- {:.3g} and the log zeta it ran with, {:.6g} +- {:.3g}, differ "
        "by {:.1f} standard errors: at least one SE is too small (chains that do not move between "
        "modes report the SE of the mode they are in)",
        k, latest.log_z, latest.log_z_se, latest.log_zeta, latest.log_zeta_se, z);

  // The best earlier round: the smallest variance per draw (the later one on a tie).
  int best = -1;
  for (std::size_t i = 0; i + 1 < rounds.size(); ++i) {
    const double v = rounds[i].variance_x_draws();
    if (std::isfinite(v) && (best < 0 || v <= rounds[static_cast<std::size_t>(best)].variance_x_draws()))
      best = static_cast<int>(i);
  }
  const double v_latest = latest.variance_x_draws();
  const BootstrapRoundQuality* b = best >= 0 ? &rounds[static_cast<std::size_t>(best)] : nullptr;
  if (b) c.variance_ratio = v_latest / b->variance_x_draws();

  auto keep_best = [&](const std::string& why) {
    c.use_refit = false;
    c.kept_round = b->round;
    c.reason = fmt::format("{}: round {} gets round {}'s base again ({}) with log zeta = round "
                           "{}'s log Z {:.6g}",
                           why, k + 1, b->round + 1, origin_name(b->base_origin), b->round + 1,
                           b->log_z);
  };

  if (!latest.refit_ok) {
    if (b)
      keep_best(fmt::format("round {}'s refit failed", k));
    else
      c.reason = fmt::format("round {}'s refit failed and no earlier round has a base to reuse", k);
    return c;
  }
  if (!b) {
    c.use_refit = true;
    c.reason = rounds.size() == 1
                   ? fmt::format("round {} is the first: its refit is used", k)
                   : fmt::format("no earlier round has a known log Z SE: round {}'s refit is used", k);
    return c;
  }
  if (!std::isfinite(v_latest) || !(latest.log_z_se_dof > 0.0) || !(b->log_z_se_dof > 0.0)) {
    c.use_refit = true;
    c.reason = fmt::format("round {}'s log Z SE or its degrees of freedom are unknown (too few draws "
                           "for batch means, and a single chain): its refit is used unjudged",
                           k);
    return c;
  }
  c.threshold = std::isinf(ratio) ? ratio
                                  : std::max(ratio, f_quantile(latest.log_z_se_dof, b->log_z_se_dof));
  if (std::isinf(ratio) || v_latest <= c.threshold * b->variance_x_draws()) {
    c.use_refit = true;
    c.reason = fmt::format(
        "round {}'s log Z variance per draw is {:.3g} x round {}'s (<= {:.3g}, the larger of {:g} and "
        "what noise in SEs of {:g} and {:g} degrees of freedom reaches once in 1000): its refit is used",
        k, c.variance_ratio, b->round + 1, c.threshold, ratio, latest.log_z_se_dof, b->log_z_se_dof);
    return c;
  }
  keep_best(fmt::format("round {} ({}) gave log Z a variance per draw {:.3g} x round {}'s (> {:.3g}), "
                        "SE {:.3g} against {:.3g}: its refit is not used",
                        k, origin_name(latest.base_origin), c.variance_ratio, b->round + 1,
                        c.threshold, latest.log_z_se, b->log_z_se));
  return c;
}

}  // namespace pemc::extended
