#pragma once
// The graceful stop: SIGTERM and SIGUSR1 only set a flag, which the event loops read between
// iterations and turn into a checkpoint and exit kExitCheckpointed.
namespace pemc::runner {

// The signal received (0: none yet).
int stop_signal();

// Its name for the log ("SIGTERM", "SIGUSR1", "?").
const char* stop_signal_name(int sig);

}  // namespace pemc::runner
