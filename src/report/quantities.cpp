#include "report/quantities.hpp"

#include <algorithm>
#include <cctype>

#include "core/error.hpp"

namespace pemc::report {

std::string coordinate_name(int i) { return "x[" + std::to_string(i + 1) + "]"; }

std::string cmdstan_name(const std::string& stan_name) {
  std::string out;
  out.reserve(stan_name.size());
  for (char c : stan_name) {
    if (c == '[' || c == ',')
      out += '.';
    else if (c != ']' && c != ' ')
      out += c;
  }
  return out;
}

std::vector<std::string> split_quantity_list(const std::string& list) {
  std::vector<std::string> names;
  std::string current;
  int depth = 0;
  auto finish = [&] {
    if (!current.empty()) names.push_back(current);
    current.clear();
  };
  for (char c : list) {
    if (c == '[') ++depth;
    if (c == ']' && --depth < 0) break;
    if (c == ',' && depth == 0) {
      finish();
      continue;
    }
    if (!std::isspace(static_cast<unsigned char>(c))) current += c;
  }
  if (depth != 0)
    throw ConfigError("'" + list + "': unbalanced brackets in a list of quantity names (expected "
                      "e.g. mu,theta[1],Sigma[2,1])");
  finish();
  return names;
}

std::vector<std::string> quantity_names(const std::vector<std::string>& output_names,
                                        int original_dim) {
  if (!output_names.empty()) return output_names;
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(std::max(original_dim, 0)));
  for (int i = 0; i < original_dim; ++i) names.push_back(coordinate_name(i));
  return names;
}

namespace {

// Rows of weighted samples in extra_states (0: the draw has none).
int weighted_rows(const v1::Draw& d, int original_dim) {
  if (original_dim <= 0 || d.extra_states_size() == 0) return 0;
  if (d.extra_states_size() % original_dim != 0) return 0;
  return d.extra_states_size() / original_dim;
}

}  // namespace

int draw_sample_count(const v1::Draw& d, int original_dim) {
  return std::max(weighted_rows(d, original_dim), 1);
}

bool draw_is_weighted(const v1::Draw& d, int original_dim) {
  const int n = weighted_rows(d, original_dim);
  return d.log_weights_size() > 0 && d.log_weights_size() == std::max(n, 1);
}

std::span<const double> sample_point(const v1::Draw& d, int original_dim, int j) {
  if (weighted_rows(d, original_dim) > 0)
    return {d.extra_states().data() + static_cast<std::ptrdiff_t>(j) * original_dim,
            static_cast<std::size_t>(original_dim)};
  return {d.state().data(), static_cast<std::size_t>(d.state_size())};
}

bool sample_quantities(const v1::Draw& d, int original_dim, bool named_outputs, int j,
                       std::span<double> out) {
  const auto k = static_cast<int>(out.size());
  if (named_outputs) {
    const int n = draw_sample_count(d, original_dim);
    if (d.outputs_size() != n * k || j >= n) return false;
    std::copy_n(d.outputs().data() + static_cast<std::ptrdiff_t>(j) * k, k, out.data());
    return true;
  }
  const auto x = sample_point(d, original_dim, j);
  if (static_cast<int>(x.size()) < k) return false;
  std::copy_n(x.data(), k, out.data());
  return true;
}

}  // namespace pemc::report
