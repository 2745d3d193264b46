#!/usr/bin/env bash
# One pseudo-extended chain spread over the ranks (pseudo-sample blocks, issue 4): potential and
# gradient bits, and whole NUTS/HMC chains with adaptation, are identical on 1, 2 and 4 ranks.
# pe_blocks_check (tests/statistical/pe_blocks_check.cpp) prints bit hashes per case and exits 1
# if the ranks of one run disagree or a throw on one rank does not reach every rank. Then the same
# through pemc-dist with ranks_per_chain = 2.
source "$(dirname "$0")/common.sh"
if overloaded; then
  echo "SKIPPED: every run here spreads a chain over ranks, which needs cores to spare ($(overload_note))"
  exit "$SKIP"
fi
# Oversubscribed ranks (4 on a 2-core machine) must yield while waiting in the collectives.
export OMPI_MCA_mpi_yield_when_idle=1
CHECK="$PEMC_BIN/tests/pe_blocks_check"
[ -x "$CHECK" ] || fail "$CHECK not built (cmake --build ... --target pe_blocks_check)"
for n in 1 2 4; do
  run_mpi "$n" "$CHECK" > "$WORK/n$n.txt" || { cat "$WORK/n$n.txt" >&2; fail "-n $n: ranks disagree or the run failed"; }
done
cat "$WORK/n1.txt"
[ "$(wc -l < "$WORK/n1.txt")" -eq 5 ] || fail "expected 5 result lines from -n 1"
cmp -s "$WORK/n1.txt" "$WORK/n2.txt" || { diff "$WORK/n1.txt" "$WORK/n2.txt" >&2; fail "-n 1 and -n 2 differ"; }
cmp -s "$WORK/n1.txt" "$WORK/n4.txt" || { diff "$WORK/n1.txt" "$WORK/n4.txt" >&2; fail "-n 1 and -n 4 differ"; }
# End to end through pemc-dist: PE chains with ranks_per_chain = 2 give the same draws on 1, 2
# and 4 ranks (one group of 2 workers when there are enough, else each chain on one rank).
# same_draws_on_1_2_4 NAME ROWS [EXPORT_FLAGS...]: runs $WORK/NAME.pbtxt through pemc-dist on 1, 2
# and 4 ranks and fails unless -n 1 exports ROWS lines and every rank count exports the same draws.
same_draws_on_1_2_4() {
  local name=$1 rows=$2
  shift 2
  for n in 1 2 4; do
    run_mpi "$n" "$DIST" "$WORK/$name.pbtxt" --output "$WORK/$name$n.pemc" --log-level warn \
      || fail "pemc-dist ($name) -n $n failed"
    "$REPORT" export "$WORK/$name$n.pemc" "$@" | sort > "$WORK/$name$n.csv"
  done
  [ "$(wc -l < "$WORK/${name}1.csv")" -eq "$rows" ] || fail "expected $rows rows from -n 1 ($name)"
  cmp -s "$WORK/${name}1.csv" "$WORK/${name}2.csv" || fail "pemc-dist: -n 1 and -n 2 $name draws differ"
  cmp -s "$WORK/${name}1.csv" "$WORK/${name}4.csv" || fail "pemc-dist: -n 1 and -n 4 $name draws differ"
}
cat > "$WORK/pe.pbtxt" <<CFG
name: "pe_blocks"
target { mixture { preset: KOU_B } }
sampler {
  pseudo_extended {
    n_pseudo: 5
    ranks_per_chain: 2
    nuts { step_size: 0.1 metric: DIAGONAL adaptation { enabled: true adapt_metric: true } }
  }
}
warmup: 100
iterations: 150
seeds { base: 1 count: 2 }
init { uniform_box { lower: 0 upper: 10 } }
output { path: "$WORK/pe.pemc" }
CFG
# The export has one row per pseudo-sample (5 per draw).
same_draws_on_1_2_4 pe $((2 * 150 * 5 + 1))
# Cost (issue 31, item 5): n_gradient_evals counts target gradients, N = 5 per extended
# evaluation, whether one rank evaluates all five pseudo-samples or two ranks a block each; the
# extended count is its own field, and both are the same on 1, 2 and 4 ranks.
for n in 1 2 4; do
  "$REPORT" summarize "$WORK/pe$n.pemc" --format json > "$WORK/pe_cost$n.json"
done
python3 - "$WORK"/pe_cost{1,2,4}.json <<'PY' || fail "pseudo-extended gradient counts"
import json, sys
counts = []
for path in sys.argv[1:]:
    runs = json.load(open(path))["runs"]
    assert len(runs) == 2, runs
    for r in runs:
        assert r["n_extended_gradient_evals"] > 0, r
        assert r["n_gradient_evals"] == 5 * r["n_extended_gradient_evals"], r
    counts.append([(r["chain_id"], r["n_gradient_evals"], r["n_extended_gradient_evals"]) for r in runs])
assert counts[0] == counts[1] == counts[2], counts
print("pseudo-extended counts (chain, target, extended):", counts[0])
PY
# HMC with fixed beta and diagonal metric adaptation; warmup draws written and sampling draws
# thinned, so the state is gathered at some iterations and not at others.
cat > "$WORK/pe_hmc.pbtxt" <<CFG
name: "pe_blocks_hmc"
target { mixture { preset: KOU_A } }
sampler {
  pseudo_extended {
    n_pseudo: 5
    fixed_beta: 0.3
    ranks_per_chain: 2
    hmc { step_size: 0.05 n_leapfrog: 8 jitter_step_size: true metric: DIAGONAL
          adaptation { enabled: true adapt_metric: true } }
  }
}
warmup: 80
iterations: 120
seeds { base: 3 count: 2 }
init { uniform_box { lower: 0 upper: 10 } }
output { path: "$WORK/pe_hmc.pemc" write_warmup: true thin: 3 }
CFG
same_draws_on_1_2_4 pe_hmc $((2 * (80 + 40) * 5 + 1)) --include-warmup
# The Boltzmann relaxation pe28 (d = 27) through its own batch path (points in AVX2 lanes where
# the CPU has them): N = 5 splits 3 + 2 over a group of two, so each point is evaluated in
# batches of different sizes and positions on 1 and 2 ranks.
cat > "$WORK/pe_boltz.pbtxt" <<CFG
name: "pe_blocks_boltzmann"
target { boltzmann { q_file: "$PEMC_SHARED_DIR/data/boltzmann-pe28/Q.txt"
                     bias_file: "$PEMC_SHARED_DIR/data/boltzmann-pe28/b.txt"
                     max_enumeration_units: 20 } }
sampler {
  pseudo_extended {
    n_pseudo: 5
    ranks_per_chain: 2
    nuts { step_size: 0.1 metric: DIAGONAL adaptation { enabled: true adapt_metric: true } }
  }
}
warmup: 40
iterations: 40
seeds { base: 5 count: 2 }
init { uniform_box { lower: -2 upper: 2 } }
output { path: "$WORK/pe_boltz.pemc" }
CFG
same_draws_on_1_2_4 pe_boltz $((2 * 40 * 5 + 1))
echo "1 passed, 0 failed"
