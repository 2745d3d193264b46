#pragma once
// Errors of running estimates against exact values over run time: the CT paper's Figure 2
// (Graham & Storkey 2017, Section 7.2). From the EstimatesSnapshot records (records.proto) of one
// file (one method over many targets and seeds):
//   per chain and snapshot, the error of its estimate against the exact value of its own target:
//     log_z       |log Z_est - log Z|
//     mean        RMSE over the d coordinates of the running mean (EstimatesSnapshot.mean)
//     covariance  RMSE over ALL d x d entries of the running covariance (the packed upper triangle
//                 unpacked symmetrically, so each off-diagonal entry counts twice, as an RMSE over
//                 the matrix does)
//   normalised (Normalise::kBase) by the same error of the base density's moments and of its
//   log zeta (EstimatesSnapshot.base): values below 1 improve on the variational approximation;
//   then, per snapshot index, the mean over the chains with its standard error (the paper's
//   curves and +-3 SE bands), against the chains' mean wall time there.
// Exact values come from rebuilding each run's target from the header's config (Target::truth:
// log Z, E[x], E[x x']); runs without them are left out (with a note).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace pemc::v1 {
class EstimatesSnapshot;
class BaseMoments;
class Header;
}  // namespace pemc::v1

namespace pemc::report {

enum class ErrorQuantity { kLogZ, kMean, kCovariance };
enum class Normalise { kNone, kBase };

// "log_z", "mean", "covariance" / "none", "base"; ConfigError otherwise.
ErrorQuantity parse_error_quantity(const std::string& name);
Normalise parse_normalise(const std::string& name);
std::string quantity_name(ErrorQuantity q);

// What is known exactly about a target (empty optionals: unknown).
struct ExactMoments {
  std::optional<double> log_z;
  std::optional<Vector> mean;
  std::optional<Matrix> covariance;
};

// The exact values of the target of run `run_id` of a file with this header (the header's config
// rebuilt; each distinct target once per process); empty when it cannot be built or knows none.
ExactMoments exact_moments(const v1::Header& header, const std::string& run_id);

// sqrt(mean_i (a_i - b_i)^2); DataError when the sizes differ or are 0.
double rmse(std::span<const double> a, std::span<const double> b);
// The symmetric d x d matrix of a packed upper triangle (row-major); DataError on a size mismatch.
Matrix unpack_upper(std::span<const double> packed, int d);

// The error of an estimate (log Z, or a packed mean / covariance as in the snapshot) against the
// exact value; nullopt when either side is missing.
std::optional<double> estimate_error(ErrorQuantity q, double log_z,
                                     std::span<const double> mean,
                                     std::span<const double> covariance, const ExactMoments& exact);
std::optional<double> snapshot_error(ErrorQuantity q, const v1::EstimatesSnapshot& s,
                                     const ExactMoments& exact);
std::optional<double> base_error(ErrorQuantity q, const v1::BaseMoments& b,
                                 const ExactMoments& exact);

struct ChainErrors {
  std::string run_id;
  int chain_id = 0;
  std::uint64_t seed = 0;
  std::vector<double> wall_seconds, error;  // per snapshot, in order
};

// Every chain of `file` with an error at each of its snapshots (normalised when asked); chains of
// runs without an exact value or (kBase) without a usable base error are left out, with a note,
// and so are the snapshots of chain id -1 (a CT bootstrap round's pooled estimates).
std::vector<ChainErrors> read_chain_errors(const std::filesystem::path& file, ErrorQuantity q,
                                           Normalise normalise, const std::string& run_filter,
                                           std::vector<std::string>& notes);

struct ErrorCurvePoint {
  std::size_t index = 0;      // snapshot index (0 = the first snapshot of each chain)
  double wall_seconds = 0.0;  // mean over the chains
  int n_chains = 0;
  double mean = 0.0;          // mean error over the chains
  double se = 0.0;            // its standard error: sample sd / sqrt(n) (0 for one chain)
};

// Per snapshot index that every chain reached (chains end at the same iteration count).
std::vector<ErrorCurvePoint> aggregate_errors(const std::vector<ChainErrors>& chains);

// CSV: file,estimate,normalise,index,wall_seconds,n_chains,mean_error,se_error per point of every
// file's curve (only the last point of each file with final_only). Returns the rows written.
std::int64_t write_error_curves_csv(const std::vector<std::filesystem::path>& files,
                                    ErrorQuantity q, Normalise normalise,
                                    const std::string& run_filter, bool final_only,
                                    std::ostream& out, std::vector<std::string>& notes);

}  // namespace pemc::report
