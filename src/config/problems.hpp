#pragma once
// The collector of validation problems and the small formatting and range checks every rule uses.
// Each problem is "<field.path>: <reason> (got <value>)"; validate() adds where the field was set.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/repeated_field.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace pemc::config {

struct Problem {
  std::string field_path;
  std::string reason;
  std::optional<std::string> value;  // formatted offending value, if there is one
  // A second field the problem is about (lower and upper of a box): when that one came from the
  // command line, the message is located there rather than in the file.
  std::string other_field = {};
};

// Problems in the order found, at most one per field: the first (usually the most basic, e.g.
// "must be finite") wins, so later rules on a broken field stay quiet.
class Problems {
 public:
  void add(const std::string& path, std::string reason, std::optional<std::string> value = {});
  // A problem of two fields together (reported at `path`, located as Problem::other_field says).
  void add_pair(const std::string& path, const std::string& other, std::string reason,
                std::optional<std::string> value = {});
  bool has(const std::string& path) const { return paths_.count(path) > 0; }
  std::vector<Problem> take() { return std::move(list_); }

 private:
  std::set<std::string> paths_;
  std::vector<Problem> list_;
};

// Bad elements of one repeated field reported individually before a summary line.
inline constexpr int kMaxElementProblems = 5;

// Values and paths as the messages show them.
std::string num(double v);
std::string num(std::int64_t v);
std::string quoted(const std::string& s);
std::string entries(std::int64_t n);                             // "1 entry", "3 entries"
std::string el(const std::string& path, int i);                  // "path[i]"
std::string oneof_names(const google::protobuf::Descriptor* d);  // the first oneof's fields

void positive(Problems& p, const std::string& path, double v);
void in_range(Problems& p, const std::string& path, std::int64_t v, std::int64_t lo,
              std::int64_t hi);
// Every entry > 0 (non-finite entries are left to the generic finite check).
void all_positive(Problems& p, const std::string& path,
                  const google::protobuf::RepeatedField<double>& v);
// The same checks for an optional field, applied only when it is set.
void optional_positive(Problems& p, const std::string& path, bool has, double v);
void optional_at_least(Problems& p, const std::string& path, bool has, std::int64_t v,
                       std::int64_t lo);

}  // namespace pemc::config
