#include "parallel/messenger.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "core/error.hpp"

namespace pemc::parallel {

namespace {
bool done(MPI_Request& r) {
  int flag = 0;
  MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
  return flag != 0;
}
}  // namespace

Messenger::~Messenger() {
  try {
    wait_all();
  } catch (...) {
  }
}

void Messenger::reap() {
  while (!in_flight_.empty() && done(in_flight_.front().request)) in_flight_.pop_front();
}

void Messenger::wait_oldest() {
  auto& oldest = in_flight_.front();
  while (!done(oldest.request)) {
    if (auto m = receive_one()) {
      inbox_.push_back(std::move(*m));
      stats_.max_inbox = std::max(stats_.max_inbox, static_cast<std::int64_t>(inbox_.size()));
    } else {
      usleep(50);
    }
  }
  in_flight_.pop_front();
}

void Messenger::send(int dest, int tag, std::string bytes, SendMode mode) {
  reap();
  const auto pending = static_cast<std::int64_t>(in_flight_.size());
  ++stats_.sends;
  stats_.sum_in_flight += pending;
  stats_.max_in_flight = std::max(stats_.max_in_flight, pending);
  if (in_flight_.size() >= max_in_flight_) {
    const auto t0 = std::chrono::steady_clock::now();
    while (in_flight_.size() >= max_in_flight_) wait_oldest();
    ++stats_.window_waits;
    stats_.window_wait_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  in_flight_.push_back(Pending{MPI_REQUEST_NULL, std::move(bytes)});
  auto& p = in_flight_.back();
  // The string's heap buffer does not move when the deque grows, so the pointer stays valid.
  auto* data = p.bytes.data();
  const int count = static_cast<int>(p.bytes.size());
  const MPI_Comm comm = static_cast<MPI_Comm>(comm_);
  const int rc = mode == SendMode::kSynchronous
                     ? MPI_Issend(data, count, MPI_CHAR, dest, tag, comm, &p.request)
                     : MPI_Isend(data, count, MPI_CHAR, dest, tag, comm, &p.request);
  if (rc != MPI_SUCCESS)
    throw IoError("MPI send of " + std::to_string(count) + " bytes to rank " +
                  std::to_string(dest) + " failed");
}

std::optional<Message> Messenger::receive_one() {
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

std::optional<Message> Messenger::poll() {
  reap();
  if (!inbox_.empty()) {
    Message m = std::move(inbox_.front());
    inbox_.pop_front();
    return m;
  }
  return receive_one();
}

void Messenger::wait_all() {
  while (!in_flight_.empty()) wait_oldest();
}

}  // namespace pemc::parallel
