#!/usr/bin/env bash
# Output faults: an unwritable output location is refused before anything runs (exit 2, naming the
# path and the reason); a disk that fills up mid-run stops the run with a clear error (non-zero exit,
# "disk full (ENOSPC)" / "File too large (EFBIG)" naming the file), and everything written before
# the failure stays readable (verify reports the good prefix, a torn last frame at worst).
# "Output file already exists" is covered by run_contract_test.sh.
# Uses small tmpfs mounts when this shell may mount (root in a VM/privileged container) and falls
# back to a file-size limit (ulimit -f) and to a file in place of the directory otherwise.
source "$(dirname "$0")/common.sh"
cfg="$PEMC_SOURCE_DIR/configs/quickstart.pbtxt"
passed=0
mounts=()
trap 'for m in "${mounts[@]}"; do umount "$m" 2>/dev/null; done; rm -rf "$WORK"' EXIT

can_mount=0
mkdir -p "$WORK/probe"
if [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o size=64k tmpfs "$WORK/probe" 2>/dev/null; then
  umount "$WORK/probe"
  can_mount=1
fi
mount_tmpfs() {  # mount_tmpfs DIR OPTIONS
  mkdir -p "$1"
  mount -t tmpfs -o "$2" tmpfs "$1"
  mounts+=("$1")
}

# expect_refused NAME OUTPUT PATTERN: exit 2, the message matches, nothing created.
expect_refused() {
  local name=$1 output=$2 pattern=$3 rc
  set +e
  run_mpi 2 "$DIST" "$cfg" --iterations 100 --output "$output" > "$WORK/$name.log" 2>&1
  rc=$?
  set -e
  [ "$rc" -eq 2 ] || { cat "$WORK/$name.log"; fail "$name: expected exit 2, got $rc"; }
  grep -qE "$pattern" "$WORK/$name.log" || { cat "$WORK/$name.log"; fail "$name: no message matching '$pattern'"; }
  [ ! -e "$output" ] || fail "$name: $output was created"
  echo "$name: exit 2: $(grep -m1 -E "$pattern" "$WORK/$name.log" | sed 's/^ *//')"
  passed=$((passed + 1))
}

# 1. A regular file where the output directory should be.
touch "$WORK/notadir"
expect_refused file-as-directory "$WORK/notadir/run.pemc" "output.path: '.*notadir' is not a directory"

# 2. A read-only directory (a read-only tmpfs; without mount rights, a mode-0555 directory when not
#    root - root ignores permission bits, so then this case is skipped).
if [ "$can_mount" -eq 1 ]; then
  mount_tmpfs "$WORK/ro" ro,size=64k
  expect_refused read-only-directory "$WORK/ro/run.pemc" "output.path: directory '.*ro' is not writable: Read-only file system"
elif [ "$(id -u)" -ne 0 ]; then
  mkdir -p "$WORK/ro" && chmod 0555 "$WORK/ro"
  expect_refused read-only-directory "$WORK/ro/run.pemc" "output.path: directory '.*ro' is not writable: Permission denied"
else
  echo "read-only-directory: SKIPPED (root without mount rights)"
fi

# 3. The disk fills up mid-run: 256 KiB hold the header and a few thousand draws, then writes fail.
# check_partial NAME FILE LOG PATTERN: non-zero exit already checked; message and readable prefix.
check_partial() {
  local name=$1 file=$2 log=$3 pattern=$4 v n s
  grep -qE "pemc-dist: fatal error on rank [0-9]+: .*$(basename "$file"): write failed: $pattern" "$log" ||
    { cat "$log"; fail "$name: no error naming the file and '$pattern'"; }
  # An I/O error on the output ends the run (the collector's, or a leader's writing its own
  # records); it is not a failure of the chain that happened to be running on that rank.
  if grep -qE "chain [0-9]+ .*failed: .*write failed" "$log"; then
    cat "$log"; fail "$name: the write error was reported as a chain failure"
  fi
  v=$("$REPORT" verify "$file" || true)
  n=$(echo "$v" | grep -oE '[0-9]+ (good )?records' | grep -oE '^[0-9]+' || true)
  [ "${n:-0}" -ge 100 ] || fail "$name: only ${n:-0} readable records: $v"
  # A chain's leader that writes its own records (direct writes) can fail at a range after others
  # wrote theirs: the file then has zeros where that range starts.
  grep -qE <<< "$v" "no footer|torn frame|zero-filled gap|zero-length frame" || fail "$name: unexpected verify result: $v"
  # summarize exits 1 for a damaged file (after summarising it): look at what it printed.
  s=$("$REPORT" summarize "$file" --format json 2>/dev/null || true)
  grep -qE <<< "$s" '"n_draws": [1-9]' || fail "$name: summarize found no draws in the partial file"
  echo "$name: $(grep -m1 -oE "pemc-dist: fatal error on rank .*" "$log"); $v"
  passed=$((passed + 1))
}

run_until_failure() {  # run_until_failure NAME LOG COMMAND... -> fails the test unless exit != 0 in 60 s
  local name=$1 log=$2 rc; shift 2
  set +e
  timeout 60 mpirun --oversubscribe -n 3 "$@" > "$log" 2>&1
  rc=$?
  set -e
  [ "$rc" -ne 124 ] || { cat "$log"; fail "$name: the run hung"; }
  [ "$rc" -ne 0 ] || { cat "$log"; fail "$name: exit 0 although the output could not be written"; }
}

if [ "$can_mount" -eq 1 ]; then
  mount_tmpfs "$WORK/small" size=256k
  run_until_failure disk-full "$WORK/full.log" "$DIST" "$cfg" --iterations 1000000 --output "$WORK/small/run.pemc"
  check_partial disk-full "$WORK/small/run.pemc" "$WORK/full.log" "disk full \(ENOSPC\)"
else
  echo "disk-full (tmpfs): SKIPPED (no mount rights); the file-size limit below covers the same path"
fi

# 4. A file-size limit (RLIMIT_FSIZE) set on the ranks only (mpirun's own shared-memory files need
#    more): pemc-dist ignores SIGXFSZ, so the write fails with EFBIG instead of killing the rank.
#    Open MPI's shared-memory transport sizes its backing files inside MPI_Init, before pemc-dist
#    can ignore SIGXFSZ, and they exceed the limit; so this case uses TCP over loopback between
#    the ranks (btl self,tcp): then the record file is the only file that grows.
OMPI_MCA_btl=self,tcp run_until_failure file-size-limit "$WORK/fsize.log" bash -c \
  "ulimit -f 256; exec \"$DIST\" \"$cfg\" --iterations 1000000 --output \"$WORK/fsize.pemc\""
check_partial file-size-limit "$WORK/fsize.pemc" "$WORK/fsize.log" "File too large \(EFBIG\)"

echo "$passed passed, 0 failed"
