#include "runner/task_farm.hpp"

namespace pemc::runner {

TaskFarm::TaskFarm(std::vector<int> todo, std::function<bool()> rounds_pending)
    : todo_(std::move(todo)), rounds_pending_(std::move(rounds_pending)) {}

int TaskFarm::take() {
  if (stopping_) return kNoneLeft;
  if (next_ < todo_.size()) return todo_[next_++];
  if (!ready_.empty()) {
    const int item = ready_.front();
    ready_.pop_front();
    return item;
  }
  return rounds_pending_ && rounds_pending_() ? kWaitForRound : kNoneLeft;
}

std::vector<std::pair<int, int>> TaskFarm::assign_waiting() {
  std::vector<std::pair<int, int>> out;
  while (!waiting_.empty()) {
    const int item = take();
    if (item == kWaitForRound) break;
    out.emplace_back(waiting_.front(), item);
    waiting_.pop_front();
  }
  return out;
}

}  // namespace pemc::runner
