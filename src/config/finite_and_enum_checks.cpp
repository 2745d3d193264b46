#include "config/finite_and_enum_checks.hpp"

#include <cmath>
#include <vector>

namespace pemc::config {

namespace pb = google::protobuf;

void check_finite_and_enums(const pb::Message& msg, const std::string& prefix, Problems& p) {
  const pb::Reflection* r = msg.GetReflection();
  std::vector<const pb::FieldDescriptor*> fields;
  r->ListFields(msg, &fields);
  for (const auto* f : fields) {
    const std::string path = prefix.empty() ? f->name() : prefix + "." + f->name();
    using CT = pb::FieldDescriptor::CppType;
    const int n = f->is_repeated() ? r->FieldSize(msg, f) : 1;
    int reported = 0;
    for (int i = 0; i < n; ++i) {
      const std::string ep = f->is_repeated() ? el(path, i) : path;
      std::optional<std::string> bad_value;
      std::string reason;
      switch (f->cpp_type()) {
        case CT::CPPTYPE_DOUBLE:
        case CT::CPPTYPE_FLOAT: {
          double v = 0;
          if (f->cpp_type() == CT::CPPTYPE_DOUBLE) {
            v = f->is_repeated() ? r->GetRepeatedDouble(msg, f, i) : r->GetDouble(msg, f);
          } else {
            v = f->is_repeated() ? r->GetRepeatedFloat(msg, f, i) : r->GetFloat(msg, f);
          }
          if (!std::isfinite(v)) {
            reason = "must be a finite number";
            bad_value = num(v);
          }
          break;
        }
        case CT::CPPTYPE_ENUM: {
          const int v =
              f->is_repeated() ? r->GetRepeatedEnumValue(msg, f, i) : r->GetEnumValue(msg, f);
          if (!f->enum_type()->FindValueByNumber(v)) {
            std::string names;
            for (int k = 0; k < f->enum_type()->value_count(); ++k) {
              names += (k ? ", " : "") + f->enum_type()->value(k)->name();
            }
            reason = "unknown value of " + f->enum_type()->name() + "; valid: " + names;
            bad_value = std::to_string(v);
          }
          break;
        }
        case CT::CPPTYPE_MESSAGE:
          check_finite_and_enums(
              f->is_repeated() ? r->GetRepeatedMessage(msg, f, i) : r->GetMessage(msg, f), ep, p);
          break;
        default:
          break;
      }
      if (bad_value) {
        if (++reported <= kMaxElementProblems) {
          p.add(ep, reason, bad_value);
        } else if (reported == kMaxElementProblems + 1) {
          p.add(path, "more elements are not finite (only the first " +
                          std::to_string(kMaxElementProblems) + " are listed)");
        }
      }
    }
  }
}

}  // namespace pemc::config
