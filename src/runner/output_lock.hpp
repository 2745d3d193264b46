#pragma once
// One writer per output file: pemc-dist holds an exclusive lock on "<output>.lock" (and on
// "<checkpoint>.lock" when checkpoint.path is not the default) from before it looks at the output
// or its checkpoint until the run has ended, checkpoint and resume included. A second job on the
// same output fails to take the lock and is refused (ConfigError, exit 2) naming the holder, before
// it changes anything.
//
// The primitive is flock(2) on a lock file next to the output; the holder writes "pid P on host H
// since T" into it for the refusal message. The lock goes away with the process that holds it
// (kill -9 included: the kernel releases it), so a stale lock file never blocks a later run; a
// finished run removes its lock file. What flock does not cover (docs/checkpointing.md, "One
// writer per output"): filesystems whose flock is local to one node (NFS mounted with
// local_lock=flock or nolock, Lustre with -o localflock, BeeGFS without global file locks) exclude
// only jobs on the same node; filesystems without flock (Lustre without -o flock) make pemc-dist
// warn and run unlocked; and another path to the same file (a hard link) or a program other than
// pemc-dist is not excluded.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace pemc::runner {

class OutputLock {
 public:
  // "<path>.lock".
  static std::filesystem::path lock_path_of(const std::filesystem::path& path);

  // Takes the lock on lock_path_of(path) without waiting. ConfigError when another process holds it
  // ("<path> is in use by another pemc-dist job (pid P on host H since T; lock file L): ...") or
  // the lock file cannot be created. When the filesystem has no working flock, returns nullptr and
  // sets *warning to say so (the run goes on unlocked).
  static std::unique_ptr<OutputLock> acquire(const std::filesystem::path& path,
                                             std::string* warning);

  // Without taking anything or creating files: the holder's description ("pid P on host H since T")
  // when another process holds the lock on `path`, else nullopt.
  static std::optional<std::string> holder(const std::filesystem::path& path);

  ~OutputLock();  // removes the lock file, then releases the lock
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  const std::filesystem::path& lock_path() const { return lock_path_; }

 private:
  OutputLock(std::filesystem::path lock_path, int fd) : lock_path_(std::move(lock_path)), fd_(fd) {}
  std::filesystem::path lock_path_;
  int fd_ = -1;
};

}  // namespace pemc::runner
