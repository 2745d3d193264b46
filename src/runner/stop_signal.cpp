#include "runner/stop_signal.hpp"

#include <csignal>

#include "runner/run.hpp"

namespace pemc::runner {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

}  // namespace

int stop_signal() { return g_stop_signal; }

const char* stop_signal_name(int sig) {
  return sig == SIGTERM ? "SIGTERM" : sig == SIGUSR1 ? "SIGUSR1" : "?";
}

void install_stop_handlers() {
  std::signal(SIGTERM, on_stop_signal);
  std::signal(SIGUSR1, on_stop_signal);
}

}  // namespace pemc::runner
