#pragma once
// Error types. Every user-facing failure is one of these, with a message that says what and where.
#include <stdexcept>
#include <string>

namespace pemc {

// Base of all pemc errors; `what()` is the complete user-facing message.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A bad configuration: file, line (text format), field path, reason.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// A bad data file (target inputs): file, row, column, reason.
class DataError : public Error {
 public:
  using Error::Error;
};

// Filesystem or stream failure (unreadable/unwritable path, disk full, corrupt record file).
class IoError : public Error {
 public:
  using Error::Error;
};

// Numerical failure that cannot be turned into a rejection (e.g. a non-SPD covariance in a config).
class NumericalError : public Error {
 public:
  using Error::Error;
};

// Input pemc refuses to trust: a FIFO or device where a regular file is expected, a link or a
// special file where pemc-dist creates its own files, a record file whose header asks for more
// than any run pemc-dist writes. pemc-dist and pemc-report exit 2 for it: nothing was read or
// written on its account.
class UntrustedInputError : public Error {
 public:
  using Error::Error;
};

}  // namespace pemc
