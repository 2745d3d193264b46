#!/usr/bin/env bash
# Pseudo-extended NUTS on a Stan model, one chain on 1 rank against the same chain on R ranks
# (ranks_per_chain: R, each rank evaluating N/R of the N pseudo-samples): wall time per iteration.
#
# Usage:
#   PEMC_BIN=build tests/bench/pe_ranks_per_chain.sh [-n N] [-r R] [-p PAIRS] [-i ITERS] \
#       [-w WORKDIR] MODEL.stan DATA.json
#   e.g. tests/bench/pe_ranks_per_chain.sh -n 8 -r 2 ../shared/posteriordb/models/gp_pois_regr.stan gp_pois_regr.json
# Needs pemc built (pemc-dist, pemc-report in $PEMC_BIN, default build/), mpirun, /usr/bin/time.
#
# Both runs use the same seed, so they make the same draws (pemc's results do not depend on
# ranks_per_chain) and the same number of gradient evaluations; checked below. Measured: the
# chain's wall_seconds from `pemc-report summarize` (sampling only, start-up excluded) divided by
# warmup + iterations. Wall time is what ranks_per_chain buys, so the machine must have R idle
# cores: on a loaded machine the R ranks wait for each other at every gradient and the ratio says
# more about the scheduler than about pemc (the load is printed). PAIRS interleaved pairs (1 rank,
# R ranks), default 3; ITERS warmup and ITERS iterations, default 200.
set -euo pipefail

PEMC_BIN=${PEMC_BIN:-build}
n=8 r=2 pairs=3 iters=200 work=/tmp/pemc-pe-bench
while (($#)); do
  case $1 in
    -n) n=$2; shift 2 ;;
    -r) r=$2; shift 2 ;;
    -p) pairs=$2; shift 2 ;;
    -i) iters=$2; shift 2 ;;
    -w) work=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) break ;;
  esac
done
(($# == 2)) || { echo "usage: $0 [options] MODEL.stan DATA.json (try --help)" >&2; exit 2; }
model=$(realpath "$1") data=$(realpath "$2")
mkdir -p "$work"

# The chain's wall_seconds and gradient evaluations from pemc-report summarize --format json.
chain_stats() {
  Rscript -e 'j <- jsonlite::fromJSON(file("stdin"), simplifyVector = FALSE)
    r <- j$runs[[1]]; cat(sprintf("%.4f %.0f\n", as.numeric(r$wall_seconds), as.numeric(r$n_gradient_evals)))'
}

run() {  # run RANKS PAIR: one chain of pseudo-extended NUTS with ranks_per_chain = RANKS
  local ranks=$1 i=$2 cfg=$work/pe_r$1_$2.pbtxt out=$work/pe_r$1_$2.pemc
  cat > "$cfg" <<EOF
name: "pe_n${n}_r${ranks}"
target { stan { model_file: "$model" data_file: "$data" propto: true } }
sampler { pseudo_extended { n_pseudo: $n ranks_per_chain: $ranks nuts { step_size: 1 metric: DIAGONAL adaptation { enabled: true adapt_metric: true target_accept: 0.8 } } } }
warmup: $iters
iterations: $iters
seeds { values: [1] }
output { path: "$out" }
EOF
  rm -f "$out"
  if ((ranks == 1)); then "$PEMC_BIN/pemc-dist" "$cfg" > "$work/pe_r${ranks}_$i.log" 2>&1
  else mpirun --allow-run-as-root --oversubscribe -n "$ranks" "$PEMC_BIN/pemc-dist" "$cfg" > "$work/pe_r${ranks}_$i.log" 2>&1
  fi
  "$PEMC_BIN/pemc-report" summarize "$out" --no-truth --format json | chain_stats
}

echo "| pair | 1 rank: ms per iteration | $r ranks: ms per iteration | ratio | gradient evaluations (1 / $r ranks) |"
echo "|---|---|---|---|---|"
ratios=()
for ((i = 1; i <= pairs; i++)); do
  read -r w1 g1 < <(run 1 "$i")
  read -r w2 g2 < <(run "$r" "$i")
  ms1=$(awk -v w="$w1" -v k="$iters" 'BEGIN { printf "%.3f", 1000 * w / (2 * k) }')
  ms2=$(awk -v w="$w2" -v k="$iters" 'BEGIN { printf "%.3f", 1000 * w / (2 * k) }')
  ratio=$(awk -v a="$ms2" -v b="$ms1" 'BEGIN { printf "%.2f", a / b }')
  ratios+=("$ratio")
  [[ $g1 == "$g2" ]] || echo "warning: the two runs made different numbers of gradient evaluations" >&2
  echo "| $i | $ms1 | $ms2 | $ratio | $g1 / $g2 |"
done
echo "| median | | | $(printf '%s\n' "${ratios[@]}" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }') | |"
echo
echo "N = $n, ranks_per_chain $r vs 1, $iters warmup + $iters iterations; $(basename "$model"); load: $(uptime | sed 's/.*load average/load average/'); $(nproc) cores"
