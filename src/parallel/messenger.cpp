#include "parallel/messenger.hpp"

#include <boost/mpi/status.hpp>

namespace pemc::parallel {

Messenger::~Messenger() {
  try {
    wait_all();
  } catch (...) {
  }
}

void Messenger::reap() {
  while (!in_flight_.empty() && in_flight_.front().request.test()) in_flight_.pop_front();
}

void Messenger::send(int dest, int tag, std::string bytes) {
  reap();
  while (in_flight_.size() >= max_in_flight_) {
    in_flight_.front().request.wait();
    in_flight_.pop_front();
  }
  in_flight_.push_back(Pending{{}, std::move(bytes)});
  auto& p = in_flight_.back();
  // The string's heap buffer does not move when the deque grows, so the pointer stays valid.
  p.request = comm_.isend(dest, tag, p.bytes.data(), static_cast<int>(p.bytes.size()));
}

std::optional<Message> Messenger::poll() {
  reap();
  auto status = comm_.iprobe(boost::mpi::any_source, boost::mpi::any_tag);
  if (!status) return std::nullopt;
  Message m;
  m.source = status->source();
  m.tag = status->tag();
  const auto count = status->count<char>();
  m.bytes.resize(count ? static_cast<std::size_t>(*count) : 0);
  comm_.recv(m.source, m.tag, m.bytes.data(), static_cast<int>(m.bytes.size()));
  return m;
}

void Messenger::wait_all() {
  for (auto& p : in_flight_) p.request.wait();
  in_flight_.clear();
}

}  // namespace pemc::parallel
