#include "runner/resume_command.hpp"

namespace pemc::runner {

std::string shell_quote(const std::string& s) {
  const bool safe = !s.empty() && s.find_first_not_of(
                                      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                      "0123456789_./=:,+-@%") == std::string::npos;
  if (safe) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string join_words(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + shell_quote(w);
  return s;
}

std::vector<std::string> plan_options(const RunOptions& o) {
  std::vector<std::string> out;
  if (o.overrides.iterations)
    out.insert(out.end(), {"--iterations", std::to_string(*o.overrides.iterations)});
  if (o.overrides.warmup) out.insert(out.end(), {"--warmup", std::to_string(*o.overrides.warmup)});
  if (o.overrides.seeds) out.insert(out.end(), {"--seeds", std::to_string(*o.overrides.seeds)});
  for (const auto& s : o.overrides.sets) out.insert(out.end(), {"--set", s});
  if (!o.task_range.empty()) out.insert(out.end(), {"--task-range", o.task_range});
  if (o.array_task_size > 0)
    out.insert(out.end(), {"--array-task-size", std::to_string(o.array_task_size)});
  return out;
}

std::string resume_command(const RunOptions& o, const std::string& output) {
  const auto options = plan_options(o);
  return "pemc-dist " + shell_quote(o.config_path.string()) + " --output " + shell_quote(output) +
         (options.empty() ? "" : " " + join_words(options)) + " --resume";
}

}  // namespace pemc::runner
