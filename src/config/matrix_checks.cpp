#include "config/matrix_checks.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <limits>

#include "config/limits.hpp"
#include "core/types.hpp"

namespace pemc::config {

namespace {

// Positive definiteness is checked here only up to this dimension (O(d^3)).
constexpr std::int64_t kMaxCheckedDenseDimension = 2000;

std::int64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return std::numeric_limits<std::int64_t>::max();
  return static_cast<std::int64_t>(pages) * static_cast<std::int64_t>(page);
}

}  // namespace

void dense_fits(Problems& p, const std::string& path, std::int64_t dim, int copies,
                const std::string& what) {
  if (dim <= 0 || dim > kMaxDimension) return;
  const double bytes = static_cast<double>(dim) * static_cast<double>(dim) * 8.0 * copies;
  const double available = static_cast<double>(physical_memory_bytes());
  if (bytes > available) {
    p.add(path,
          fmt::format("needs {} dense {} x {} matrices ({}) = {:.3g} GB, more than this machine's "
                      "{:.3g} GB of memory",
                      copies, dim, dim, what, bytes / 1e9, available / 1e9),
          num(dim));
  }
}

void check_spd(Problems& p, const std::string& path,
               const google::protobuf::RepeatedField<double>& a, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    const double d = a[static_cast<int>(i * n + i)];
    if (!(d > 0)) {
      p.add(el(path, static_cast<int>(i * n + i)),
            "diagonal entry (" + num(i) + ", " + num(i) + ") must be > 0", num(d));
      return;
    }
  }
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = i + 1; j < n; ++j) {
      const double x = a[static_cast<int>(i * n + j)];
      const double y = a[static_cast<int>(j * n + i)];
      const double scale =
          std::sqrt(a[static_cast<int>(i * n + i)] * a[static_cast<int>(j * n + j)]);
      if (std::fabs(x - y) > 1e-10 * scale) {
        p.add(path, "must be symmetric: entry (" + num(i) + ", " + num(j) + ") = " + num(x) +
                        " but (" + num(j) + ", " + num(i) + ") = " + num(y));
        return;
      }
    }
  }
  if (n > kMaxCheckedDenseDimension) return;
  Matrix m(n, n);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) m(i, j) = a[static_cast<int>(i * n + j)];
  }
  Eigen::LLT<Matrix> llt(m);
  if (llt.info() != Eigen::Success) p.add(path, "must be positive definite (Cholesky failed)");
}

}  // namespace pemc::config
