#pragma once
// Which base the next bootstrap round of continuous tempering uses (Graham & Storkey 2017, Section
// 6, last paragraph; continuous_tempering_bootstrap.hpp runs the rounds).
//
// The paper's iteration always refits: the next base is the Gaussian with the pooled mean and
// covariance of eq. (21) and log zeta = the pooled log Z of eq. (20). A refit can be worse than the
// base it replaces (a covariance fitted to chains that missed a mode covers less; one user's
// 28-unit Boltzmann relaxation gave log Z 116.36 +- 0.017 in round 1 and 116.17 +- 0.16 in round 2
// with round 1's refit). A refit is judged by the round that ran it: the quality of a round is the
// variance of its pooled log Z per pooled draw,
//     v = SE^2 x draws,
// where SE is the larger of two estimates of the pooled log Z's standard error (the spread of the
// chains' own log Z, sd / sqrt(n), which sees chains that disagree; and the chains' batch-means SEs
// combined, sqrt(sum se_c^2) / n, which is defined for one chain and less noisy for a few). Per
// draw, so that rounds with fewer chains left (failures) compare fairly. Smaller is better.
//
// After round k, with j the earlier round of smallest v: round k's base did worse when
//     v_k / v_j > max(ratio, F_{0.999}(nu_k, nu_j)),
// the second term the 99.9 % point of the F distribution of the ratio of two variance estimates
// with nu_k and nu_j degrees of freedom (the across-chain SE^2 has n - 1, the chains' batch-means
// SE^2 sum_c (k_c - 1)): noise in the SEs alone drops a good refit in fewer than 1 in 1000 rounds.
// A base that shows more of the target can also show a larger SE (chains that now reach a rare mode
// disagree more than chains that all miss it), so only a clear loss counts. Then round k + 1 gets
// round j's base again (its mean and covariance) with log zeta = round j's pooled log Z (the
// estimate log zeta should match: eq. (23)'s bound on p(beta) is flat for zeta = Z); otherwise
// round k's refit is used. A round whose SE (or its degrees of freedom) is unknown cannot be
// judged: its refit is used. A failed refit (no usable draws, a covariance that is not positive
// definite) falls back on the best earlier round's base, if any.
//
// Also checked: whether the round's log Z agrees with the log zeta it ran with, when that log zeta
// was an earlier round's estimate: z = (log Z_k - log zeta_k) / sqrt(SE_k^2 + SE_source^2). |z| > 3
// means at least one of the two SEs is too small (chains that do not move between modes report an
// SE of the mode they are in); the choice then carries a warning.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace pemc::extended {

// Where a base came from: the configured one, or the refit of bootstrap round r's pooled estimates
// (r 1-based, as the log counts rounds).
inline constexpr int kConfiguredBase = 0;

// What the choice needs of one finished bootstrap round.
struct BootstrapRoundQuality {
  int round = 0;                  // 0-based
  double log_z = std::numeric_limits<double>::quiet_NaN();     // pooled, eq. (20)
  double log_z_se = std::numeric_limits<double>::quiet_NaN();  // the larger SE (above); NaN unknown
  double log_z_se_dof = 0.0;      // degrees of freedom of log_z_se^2 (0: unknown)
  std::int64_t draws = 0;         // pooled post-warmup draws
  int base_origin = kConfiguredBase;  // of the base this round ran with
  double log_zeta = std::numeric_limits<double>::quiet_NaN();  // the log zeta it ran with
  // SE of the estimate that log zeta was (NaN: the configured base's own log zeta).
  double log_zeta_se = std::numeric_limits<double>::quiet_NaN();
  bool refit_ok = false;          // the round's pooled estimates gave a refit

  // SE^2 x draws; NaN when the SE is unknown.
  double variance_x_draws() const;
  // (log_z - log_zeta) / sqrt(log_z_se^2 + log_zeta_se^2); NaN when either SE is unknown.
  double log_zeta_shift_z() const;
};

struct BootstrapBaseChoice {
  bool use_refit = false;  // the latest round's refit
  // Otherwise (when possible) the base of this earlier round (0-based) with log zeta = its log Z.
  int kept_round = -1;
  double variance_ratio = std::numeric_limits<double>::quiet_NaN();  // v_latest / min earlier v
  double threshold = std::numeric_limits<double>::quiet_NaN();       // max(ratio, F quantile)
  std::string reason;   // one sentence for the log
  std::string warning;  // non-empty when log Z and log zeta disagree beyond their SEs
  bool has_base() const { return use_refit || kept_round >= 0; }
};

// The choice after rounds.back() finished; `rounds` are every finished round of the run, in order.
// ratio >= 1 (ContinuousTemperingBootstrapConfig.keep_variance_ratio; huge: always refit).
inline constexpr double kKeepBaseConfidence = 0.999;
BootstrapBaseChoice choose_next_base(const std::vector<BootstrapRoundQuality>& rounds,
                                     double ratio);

}  // namespace pemc::extended
