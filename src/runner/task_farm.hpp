#pragma once
// The coordinator's task farm: which item a worker asking for work gets. Items are task indices
// (into the job's tasks) plus n_chains x round for the later rounds of runs whose chains run in
// rounds. Tasks are handed out in order (those a checkpoint left unfinished), then the later
// rounds' items as their rounds complete; a worker asking while a round is still running waits
// for an answer. Once the run stops (a stop checkpoint), every request gets "none left".
#include <deque>
#include <functional>
#include <utility>
#include <vector>

namespace pemc::runner {

class TaskFarm {
 public:
  static constexpr int kNoneLeft = -1;
  static constexpr int kWaitForRound = -2;  // nothing now, but a running round will add items

  // `todo`: task indices to hand out, in order. `rounds_pending`: whether a round still running
  // will add items when it completes.
  TaskFarm(std::vector<int> todo, std::function<bool()> rounds_pending);

  // The next item, kWaitForRound or kNoneLeft.
  int take();
  // A rank that asked while take() said kWaitForRound: answered by assign_waiting().
  void wait(int rank) { waiting_.push_back(rank); }
  // Items of a round that just completed.
  void add_ready(int item) { ready_.push_back(item); }
  // The run stops: nothing more is handed out.
  void stop() { stopping_ = true; }
  // (rank, item) for the waiting ranks, in the order they asked, as far as there are items (or
  // none left).
  std::vector<std::pair<int, int>> assign_waiting();

 private:
  std::vector<int> todo_;
  std::size_t next_ = 0;
  std::deque<int> ready_;    // items of later rounds
  std::deque<int> waiting_;  // ranks waiting for an item
  std::function<bool()> rounds_pending_;
  bool stopping_ = false;
};

}  // namespace pemc::runner
