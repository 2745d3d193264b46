#!/usr/bin/env bash
# Checkpoint/resume (issue 8): a run stopped at a checkpoint and resumed writes the same records and
# estimates, bit for bit, as the uninterrupted run. Each case runs the config once uninterrupted,
# then for several stop points: stopped with --stop-after-iterations K (the SIGTERM path at a known
# iteration; exit status 4), resumed with --resume (on another rank count where the layout allows),
# and compares the sorted `pemc-report export` rows and the per-chain summaries (wall times and the
# rank that ran a chain excepted). A real SIGTERM, a changed config and an impossible layout close.
source "$(dirname "$0")/common.sh"
export OMPI_MCA_mpi_yield_when_idle=1
passed=0

TOOL=(python3 "$PEMC_SOURCE_DIR/tests/support/record_tool.py")
summary_json() {  # the per-chain summaries and estimates, without what may differ (wall, rank)
  "$REPORT" summarize "$1" --format json |
    grep -v -e wall_seconds -e cpu_seconds -e '"file"' -e '"path"' -e '"rank"' -e '"n_records"'
  # What only the footer holds: the chains' tree-depth counts and E-BFMI (the chain driver's, over
  # every transition), the run-level warnings and the run end's R-hat and bulk ESS checks (read
  # back from the whole file: the same after a resume).
  local footer
  footer=$("${TOOL[@]}" kinds "$1" | awk '$2 == "footer" { print $1 }')
  [ -n "$footer" ] || fail "$1: no footer"
  "${TOOL[@]}" decode "$1" "$footer" | awk '/^  draw_checks \{/ { in_check = 1 }
    in_check || /e_bfmi:|n_max_tree_depth:|^  warnings:/ { print }
    in_check && /^  \}/ { in_check = 0 }'
  "${TOOL[@]}" decode "$1" "$footer" | grep -q '^  draw_checks {' || fail "$1: no draw_checks"
}

# check_case NAME CONFIG N_FIRST N_RESUME K...
check_case() {
  local name=$1 cfg=$2 n1=$3 n2=$4; shift 4
  run_mpi "$n1" "$DIST" "$cfg" --output "$WORK/$name.full.pemc" --log-level warn \
    || fail "$name: uninterrupted run failed"
  "$REPORT" export "$WORK/$name.full.pemc" --include-warmup | sort > "$WORK/$name.full.csv"
  summary_json "$WORK/$name.full.pemc" > "$WORK/$name.full.json"
  local k out rc
  for k in "$@"; do
    out="$WORK/$name.k$k.pemc"
    set +e
    run_mpi "$n1" "$DIST" "$cfg" --output "$out" --stop-after-iterations "$k" --log-level warn \
      2> "$WORK/$name.k$k.err"
    rc=$?
    set -e
    [ "$rc" -eq 4 ] || { cat "$WORK/$name.k$k.err" >&2; fail "$name: stop at $k: exit status $rc, expected 4"; }
    [ -s "$out.ckpt" ] || fail "$name: stop at $k left no checkpoint $out.ckpt"
    run_mpi "$n2" "$DIST" "$cfg" --output "$out" --resume --log-level warn \
      || fail "$name: resume after a stop at $k (-n $n2) failed"
    [ ! -e "$out.ckpt" ] || fail "$name: the checkpoint outlived the completed run"
    "$REPORT" verify "$out" > /dev/null || fail "$name: resumed file does not verify"
    "$REPORT" export "$out" --include-warmup | sort > "$WORK/$name.k$k.csv"
    cmp -s "$WORK/$name.full.csv" "$WORK/$name.k$k.csv" ||
      { diff "$WORK/$name.full.csv" "$WORK/$name.k$k.csv" | head >&2; fail "$name: records differ after a stop at $k"; }
    summary_json "$out" > "$WORK/$name.k$k.json"
    cmp -s "$WORK/$name.full.json" "$WORK/$name.k$k.json" ||
      { diff "$WORK/$name.full.json" "$WORK/$name.k$k.json" | head -20 >&2; fail "$name: summaries differ after a stop at $k"; }
  done
  echo "ok: $name (stops at $*; -n $n1 then -n $n2)"
  passed=$((passed + 1))
}

write_cfg() {  # write_cfg NAME SAMPLER-BLOCK TARGET-BLOCK [extra top-level lines]
  cat > "$WORK/$1.pbtxt" <<CFG
name: "$1"
target { $3 }
sampler { $2 }
warmup: 60
iterations: 90
seeds { base: 3 count: 2 }
chains_per_seed: 2
init { uniform_radius: 2.0 }
output { path: "$WORK/$1.pemc" write_warmup: true }
${4:-}
CFG
}

GAUSS='gaussian { mean: [1.0, -2.0, 0.5] covariance: [1.0, 0.6, 0.0, 0.6, 2.0, -0.3, 0.0, -0.3, 0.5] }'
# HMC with each chain adapting its step size and metric alone (stops inside a metric window, at
# the end of warmup, and while sampling); resumed on a different number of ranks. (Pooled warmup,
# the default for these chains, has its own case below.)
write_cfg hmc "hmc { step_size: 0.2 n_leapfrog: 8 jitter_step_size: true metric: DIAGONAL
  adaptation { enabled: true adapt_metric: true pooled: false } }" "$GAUSS"
check_case hmc "$WORK/hmc.pbtxt" 2 4 25 60 100
# NUTS, dense metric, each chain adapting alone.
write_cfg nuts "nuts { step_size: 0.2 metric: DENSE adaptation { enabled: true adapt_metric: true pooled: false } }" "$GAUSS"
check_case nuts "$WORK/nuts.pbtxt" 4 1 33 130
# Pseudo-extended NUTS with each chain spread over 2 ranks (-n 3: one group of 2 workers); the
# resumed run needs the same group size (-n 5: two groups of 2).
write_cfg pe "pseudo_extended { n_pseudo: 4 ranks_per_chain: 2
  nuts { step_size: 0.1 metric: DIAGONAL adaptation { enabled: true adapt_metric: true } } }" \
  'mixture { preset: KOU_B }'
check_case pe "$WORK/pe.pbtxt" 3 5 20 61

# Continuous tempering, joint and Gibbs (Rao-Blackwell estimates in the summaries).
CT_BASE='base { gaussian { mean: [0.0] variance: [1.06] log_zeta: 0.0 } }'
write_cfg ct_joint "continuous_tempering { variant: JOINT hmc { step_size: 0.3 n_leapfrog: 10
  jitter_step_size: true adaptation { enabled: true } } $CT_BASE }" 'mixture { preset: BIMODAL_1D }'
check_case ct_joint "$WORK/ct_joint.pbtxt" 2 3 30 100
write_cfg ct_gibbs "continuous_tempering { variant: GIBBS hmc { step_size: 0.3 n_leapfrog: 10
  jitter_step_size: true adaptation { enabled: true } } $CT_BASE }" 'mixture { preset: BIMODAL_1D }'
check_case ct_gibbs "$WORK/ct_gibbs.pbtxt" 3 1 61 149
# Parallel tempering with an adaptive ladder (K chosen during warmup) and its replicas spread over
# 2 ranks per chain (-n 3: one group of 2 workers); stops before and after the ladder changes.
write_cfg pt "parallel_tempering { hmc { step_size: 0.05 n_leapfrog: 10 jitter_n_leapfrog: true
  adaptation { enabled: true target_accept: 0.7 } } reference { mean: [5, 5] variance: [9, 9] }
  ladder { kind: LINEAR n_levels: 6 } adapt_schedule: true choose_replicas: true min_replicas: 4
  max_replicas: 12 ranks_per_chain: 2 }" 'mixture { preset: KOU_A }'
check_case pt "$WORK/pt.pbtxt" 3 3 9 60 100

# Pooled warmup (adaptation.pooled): 4 chains on 2 ranks warm up in rounds (initial buffer 20,
# windows of 25 and 50, terminal buffer 20, then 90 sampling iterations), so at a stop some chains
# have reported the round and others have not started it. Stops in window 1 (K 22: only windows
# run that long), in window 2 (K 40) and while sampling (K 60), with periodic checkpoints between:
# a warmup round runs again from its start on resume, the final round resumes chain by chain.
cat > "$WORK/pooled.pbtxt" <<CFG
name: "pooled"
target { $GAUSS }
sampler { nuts { adaptation { pooled: true init_buffer: 20 term_buffer: 20 } } }
warmup: 300
iterations: 90
seeds { base: 3 count: 2 }
chains_per_seed: 2
init { uniform_radius: 2.0 }
output { path: "$WORK/pooled.pemc" write_warmup: true }
checkpoint { every_iterations: 10 }
CFG
check_case pooled "$WORK/pooled.pbtxt" 2 3 22 40 60

# Pseudo-extended's pooled warmup on the reference path: the windows run NUTS on the target, the
# terminal buffer and sampling the extended space (src/warmup/pooled_round_config.hpp). Stops in
# window 1, window 2 and while sampling from the extended state the terminal buffer handed on.
cat > "$WORK/pe_pooled.pbtxt" <<CFG
name: "pe_pooled"
target { $GAUSS }
sampler { pseudo_extended { n_pseudo: 3 instrumental: REFERENCE_PATH nuts { step_size: 0.1
  adaptation { enabled: true adapt_metric: true pooled: true init_buffer: 20 term_buffer: 20 } } } }
warmup: 300
iterations: 90
seeds { base: 3 count: 2 }
chains_per_seed: 2
output { path: "$WORK/pe_pooled.pemc" write_warmup: true }
checkpoint { every_iterations: 10 }
CFG
check_case pe_pooled "$WORK/pe_pooled.pbtxt" 2 3 22 40 60

# A study (task farm over runs x seeds) with periodic checkpoints every few iterations interleaved
# with the stop: finished, running and not-yet-started tasks all resume; the stop hits the
# first chain to reach K while the others are anywhere.
cat > "$WORK/study.pbtxt" <<CFG
target { banana {} }
warmup: 40
iterations: 120
seeds { base: 100 count: 3 }
init { uniform_radius: 2.0 }
output { path: "$WORK/study.pemc" write_warmup: true }
checkpoint { every_iterations: 15 }
runs { name: "hmc" sampler { hmc { step_size: 0.3 n_leapfrog: 5 adaptation { enabled: true } } } }
runs { name: "mala" sampler { mala { step_size: 0.1 adaptation { enabled: true } } } iterations: 300 }
CFG
check_case study "$WORK/study.pbtxt" 3 2 50 330

# A group of another size cannot continue a chain spread over 2 ranks: a clear error, status 2.
set +e
run_mpi 3 "$DIST" "$WORK/pe.pbtxt" --output "$WORK/pe.layout.pemc" --stop-after-iterations 30 \
  --log-level warn 2> /dev/null
run_mpi 1 "$DIST" "$WORK/pe.pbtxt" --output "$WORK/pe.layout.pemc" --resume 2> "$WORK/layout.err"
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "resume on a smaller group: status $rc, expected 2"
grep -q "rank(s) per chain" "$WORK/layout.err" || { cat "$WORK/layout.err" >&2; fail "layout error message"; }
echo "ok: a different group size is refused"; passed=$((passed + 1))

# A config that differs from the checkpointed one is refused (status 2), naming the checkpoint.
set +e
run_mpi 2 "$DIST" "$WORK/hmc.pbtxt" --output "$WORK/changed.pemc" --stop-after-iterations 30 \
  --log-level warn 2> /dev/null
run_mpi 2 "$DIST" "$WORK/hmc.pbtxt" --output "$WORK/changed.pemc" --resume --iterations 91 \
  2> "$WORK/changed.err"
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "resume with another config: status $rc, expected 2"
grep -q "different config" "$WORK/changed.err" || { cat "$WORK/changed.err" >&2; fail "changed-config message"; }
echo "ok: a changed config is refused"; passed=$((passed + 1))

# Real signals to mpirun, which forwards SIGUSR1 and SIGTERM to the ranks: they checkpoint and stop
# (status 4; mpirun itself answers its own SIGTERM with status 1 after the ranks stopped), and the
# resumed file matches the uninterrupted run. The run is long enough (a few seconds) for the signal
# to land mid-way; mpirun runs without `timeout`, which would take the signal itself.
cat > "$WORK/slow.pbtxt" <<CFG
name: "slow"
target { $GAUSS }
sampler { nuts { step_size: 0.2 metric: DIAGONAL adaptation { enabled: true adapt_metric: true } } }
warmup: 200
iterations: 12000000
seeds { values: [5] }
init { uniform_radius: 2.0 }
output { path: "$WORK/slow.pemc" thin: 2000 }
CFG
run_mpi 2 "$DIST" "$WORK/slow.pbtxt" --output "$WORK/slow.full.pemc" --log-level warn
"$REPORT" export "$WORK/slow.full.pemc" | sort > "$WORK/slow.full.csv"
for sig in USR1 TERM; do
  out="$WORK/slow.$sig.pemc"
  set +e
  mpirun --oversubscribe -n 2 "$DIST" "$WORK/slow.pbtxt" --output "$out" 2> "$WORK/$sig.err" &
  pid=$!
  for _ in $(seq 1 500); do [ -s "$out" ] && break; sleep 0.02; done
  sleep 0.3
  kill -s "$sig" "$pid"
  wait "$pid"
  rc=$?
  set -e
  if [ -e "$out.ckpt" ]; then
    expected=4; [ "$sig" = TERM ] && expected=1
    [ "$rc" -eq "$expected" ] || { cat "$WORK/$sig.err" >&2; fail "SIG$sig: status $rc, expected $expected"; }
    grep -q "resume with" "$WORK/$sig.err" || { cat "$WORK/$sig.err" >&2; fail "SIG$sig: no 'resume with' log line"; }
    grep -q "signal" "$WORK/$sig.err" || fail "SIG$sig: the signal was not logged"
    run_mpi 2 "$DIST" "$WORK/slow.pbtxt" --output "$out" --resume --log-level warn
  else
    # The run finished before the signal arrived (a very fast machine): nothing to resume.
    [ "$rc" -eq 0 ] || { cat "$WORK/$sig.err" >&2; fail "SIG$sig: no checkpoint and status $rc"; }
    echo "note: SIG$sig arrived after the run had finished"
  fi
  "$REPORT" export "$out" | sort > "$WORK/slow.$sig.csv"
  cmp -s "$WORK/slow.full.csv" "$WORK/slow.$sig.csv" || fail "SIG$sig: resumed records differ"
  echo "ok: SIG$sig checkpoints and resumes"; passed=$((passed + 1))
done

# Every rank killed (SIGKILL, no chance to checkpoint) after periodic checkpoints: the file holds
# records past the last checkpoint; --resume cuts them off, writes them again, and the result is
# the uninterrupted run's.
out="$WORK/slow.kill.pemc"
set +e
mpirun --oversubscribe -n 2 "$DIST" "$WORK/slow.pbtxt" --output "$out" \
  --set checkpoint.every_seconds=0.2 --log-level warn 2> "$WORK/kill.err" &
pid=$!
for _ in $(seq 1 500); do [ -s "$out.ckpt" ] && break; sleep 0.02; done
sleep 0.3
ranks=$(pgrep -P "$pid")
[ -n "$ranks" ] && kill -KILL $ranks
wait "$pid"
set -e
if [ -e "$out.ckpt" ]; then
  run_mpi 3 "$DIST" "$WORK/slow.pbtxt" --output "$out" --resume --log-level warn \
    || fail "resume after SIGKILL failed"
fi
"$REPORT" export "$out" | sort > "$WORK/slow.kill.csv"
cmp -s "$WORK/slow.full.csv" "$WORK/slow.kill.csv" || fail "SIGKILL: resumed records differ"
echo "ok: SIGKILL after periodic checkpoints resumes from the last one"; passed=$((passed + 1))

echo "$passed passed, 0 failed"
