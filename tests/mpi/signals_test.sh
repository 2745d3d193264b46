#!/usr/bin/env bash
# Which signal stops a run under mpirun with a checkpoint (README "Outputs", docs/checkpointing.md
# "Stopping a run"), on a slow model (each gradient SLOW_MS ms, 100 by default: one iteration
# about 1 s; 500 where the default grace must not suffice):
#  - SIGUSR1 to mpirun: forwarded to every rank; checkpoint, exit 4, and the run resumes;
#  - SIGTERM to mpirun with --mca odls_base_sigkill_timeout 5: mpirun passes it to the ranks 5 s
#    later, and they checkpoint before its SIGKILL another 5 s on (mpirun itself reports 1);
#  - SIGTERM to mpirun with Open MPI's default grace (1 s): the ranks are killed mid-iteration,
#    before any checkpoint: what the README warns about;
#  - SIGTERM to the ranks themselves: checkpoint and exit 4.
source "$(dirname "$0")/common.sh"
cd "$WORK"
passed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }

cat > slow.c <<'C'
#include <stdlib.h>
#include <unistd.h>
#include "plugin_abi.h"
/* A 2-d standard normal whose every gradient takes SLOW_MS milliseconds: a slow model. */
int pemc_plugin_abi_version(void) { return 1; }
void* pemc_model_create(const char* a, char* e, size_t n) { return malloc(1); }
void pemc_model_destroy(void* m) { free(m); }
int pemc_model_dim(const void* m) { return 2; }
double pemc_model_potential_gradient(void* m, const double* x, double* g) {
  usleep(1000 * atoi(getenv("SLOW_MS") ? getenv("SLOW_MS") : "100"));
  g[0] = x[0];
  g[1] = x[1];
  return 0.5 * (x[0] * x[0] + x[1] * x[1]);
}
C
${CC:-cc} -O1 -shared -fPIC -I"$PEMC_SOURCE_DIR/src/targets" -o libslow.so slow.c || fail "cannot compile the slow plugin"
cat > slow.pbtxt <<CFG
target { plugin { library: "$PWD/libslow.so" } }
sampler { hmc { step_size: 0.5 n_leapfrog: 10 } }
modes { enabled: false }  # no mode search on the slow model: sampling starts at once
warmup: 0
iterations: 40
seeds { values: [1, 2] }
init { uniform_radius: 1.0 }
output { path: "slow.pemc" }
CFG

# handlers_ready PID N: N pemc-dist children of PID, each catching SIGTERM and SIGUSR1.
handlers_ready() {
  local p mask count=0
  for p in $(pgrep -P "$1" -x pemc-dist); do
    mask=$(awk '/^SigCgt:/ { print $2 }' "/proc/$p/status" 2>/dev/null) || return 1
    [ -n "$mask" ] && (( (16#$mask >> 14) & 1 )) && (( (16#$mask >> 9) & 1 )) || return 1
    count=$((count + 1))
  done
  [ "$count" -eq "$2" ]
}
# stopped NAME SIGNAL TARGET [mpirun options]: starts 3 ranks, sends SIGNAL to mpirun (TARGET
# mpirun) or to every rank (TARGET ranks) two iterations into sampling, and sets rc to mpirun's
# status.
stopped() {
  local name=$1 signal=$2 target=$3 pid
  shift 3
  rm -f slow.pemc.ckpt
  mpirun --oversubscribe "$@" -n 3 "$DIST" slow.pbtxt --overwrite > "$name.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do handlers_ready "$pid" 3 && break; sleep 0.1; done
  handlers_ready "$pid" 3 || { cat "$name.log"; fail "$name: the ranks did not start"; }
  # Once sampling runs (the start line is logged), two iterations in.
  for _ in $(seq 1 600); do grep -q "ranks (collector" "$name.log" && break; sleep 0.1; done
  sleep 2
  if [ "$target" = mpirun ]; then kill "-$signal" "$pid"; else pkill "-$signal" -P "$pid" -x pemc-dist; fi
  set +e
  timeout 120 tail --pid="$pid" -f /dev/null
  wait "$pid"
  rc=$?
  set -e
}

stopped usr1-mpirun USR1 mpirun
[ "$rc" -eq 4 ] || { cat usr1-mpirun.log; fail "SIGUSR1 to mpirun: exit $rc, expected 4"; }
grep -q "checkpointed (" usr1-mpirun.log && [ -e slow.pemc.ckpt ] || { cat usr1-mpirun.log; fail "SIGUSR1 to mpirun: no checkpoint"; }
# The rest of the run with a faster model (the draws do not depend on its speed).
SLOW_MS=5 run_mpi 2 "$DIST" slow.pbtxt --resume --log-level warn > resume.log 2>&1 ||
  { cat resume.log; fail "no resume after SIGUSR1"; }
"$REPORT" verify slow.pemc | grep -c ": OK (" > /dev/null || fail "the resumed run did not finish its file"
ok "SIGUSR1 to mpirun: every rank checkpoints, exit 4, the run resumes"

t0=$(date +%s)
stopped term-mpirun-grace TERM mpirun --mca odls_base_sigkill_timeout 5
grep -q "checkpointed (" term-mpirun-grace.log && [ -e slow.pemc.ckpt ] ||
  { cat term-mpirun-grace.log; fail "SIGTERM to mpirun with a 5 s grace: no checkpoint"; }
ok "SIGTERM to mpirun with --mca odls_base_sigkill_timeout 5: the ranks get it 5 s later and checkpoint (mpirun reports $rc, $(( $(date +%s) - t0 )) s in all)"

SLOW_MS=500 stopped term-mpirun TERM mpirun
[ ! -e slow.pemc.ckpt ] || { cat term-mpirun.log; fail "SIGTERM to mpirun with the default grace checkpointed: update the README and docs/checkpointing.md"; }
ok "SIGTERM to mpirun with Open MPI's default 1 s grace kills a slow model's ranks before a checkpoint (exit $rc), as the README says"

stopped term-ranks TERM ranks
[ "$rc" -eq 4 ] && grep -q "checkpointed (" term-ranks.log || { cat term-ranks.log; fail "SIGTERM to the ranks: exit $rc"; }
ok "SIGTERM to the ranks themselves: checkpoint, exit 4"

echo "signals_test: all $passed checks passed"
