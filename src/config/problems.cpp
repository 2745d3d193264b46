#include "config/problems.hpp"

#include <fmt/format.h>

#include <cmath>

namespace pemc::config {

void Problems::add(const std::string& path, std::string reason, std::optional<std::string> value) {
  if (!paths_.insert(path).second) return;
  list_.push_back(Problem{path, std::move(reason), std::move(value), {}});
}

void Problems::add_pair(const std::string& path, const std::string& other, std::string reason,
                        std::optional<std::string> value) {
  if (!paths_.insert(path).second) return;
  list_.push_back(Problem{path, std::move(reason), std::move(value), other});
}

std::string num(double v) { return fmt::format("{}", v); }
std::string num(std::int64_t v) { return std::to_string(v); }
std::string quoted(const std::string& s) { return "'" + s + "'"; }
std::string entries(std::int64_t n) { return std::to_string(n) + (n == 1 ? " entry" : " entries"); }
std::string el(const std::string& path, int i) { return path + "[" + std::to_string(i) + "]"; }

std::string oneof_names(const google::protobuf::Descriptor* d) {
  std::string s;
  const google::protobuf::OneofDescriptor* o = d->oneof_decl(0);
  for (int i = 0; i < o->field_count(); ++i) s += (i ? ", " : "") + o->field(i)->name();
  return s;
}

void positive(Problems& p, const std::string& path, double v) {
  if (!(v > 0)) p.add(path, "must be > 0", num(v));
}

void in_range(Problems& p, const std::string& path, std::int64_t v, std::int64_t lo,
              std::int64_t hi) {
  if (v < lo || v > hi) p.add(path, "must be in [" + num(lo) + ", " + num(hi) + "]", num(v));
}

void all_positive(Problems& p, const std::string& path,
                  const google::protobuf::RepeatedField<double>& v) {
  int reported = 0;
  for (int i = 0; i < v.size(); ++i) {
    if (v[i] > 0 || !std::isfinite(v[i])) continue;  // non-finite: reported generically
    if (++reported <= kMaxElementProblems) {
      p.add(el(path, i), "must be > 0", num(v[i]));
    } else {
      p.add(path, "more entries are <= 0 (only the first " + std::to_string(kMaxElementProblems) +
                      " are listed)");
      return;
    }
  }
}

void optional_positive(Problems& p, const std::string& path, bool has, double v) {
  if (has) positive(p, path, v);
}

void optional_at_least(Problems& p, const std::string& path, bool has, std::int64_t v,
                       std::int64_t lo) {
  if (has && v < lo) p.add(path, "must be >= " + num(lo), num(v));
}

}  // namespace pemc::config
