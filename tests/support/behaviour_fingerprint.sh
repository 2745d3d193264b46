#!/usr/bin/env bash
# Behaviour fingerprint: runs a fixed set of short configs (every sampler kind, the quickstart and the
# paper configs the restructuring issue names, a study, a Stan model when pemc-stanc is built, a
# pseudo-extended chain split over 2 ranks) and writes, per config, the sorted CSV export of its draws,
# its running estimates, and its summary, comparison and diagnostics with wall-clock fields removed. Two fingerprints of the same
# code are identical; a refactor that must not change behaviour is checked with
#   tests/support/behaviour_fingerprint.sh before/ ; (change) ; tests/support/behaviour_fingerprint.sh after/
#   diff -r before/ after/
# Usage: behaviour_fingerprint.sh OUTDIR [BUILD_DIR]   (run from the repository root)
set -euo pipefail
out=${1:?usage: behaviour_fingerprint.sh OUTDIR [BUILD_DIR]}
build=${2:-build}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpi=(mpirun --allow-run-as-root --oversubscribe)

# Every CSV in DIR as one sorted table: each row is prefixed by its file's name, and the wall-clock
# columns (which differ between two runs of the same code) are dropped.
sorted_without_clock_columns() {
  python3 - "$1" <<'PY'
import csv, os, re, sys
rows = []
for name in sorted(os.listdir(sys.argv[1])):
    with open(os.path.join(sys.argv[1], name), newline="") as f:
        table = list(csv.reader(f))
    if not table:
        continue
    keep = [i for i, col in enumerate(table[0]) if not re.search(r"second|time", col)]
    rows += [",".join([name] + [row[i] for i in keep]) for row in table]
print("\n".join(sorted(rows)))
PY
}

fingerprint() {  # NAME RANKS CONFIG [pemc-dist options...]
  local name=$1 ranks=$2 config=$3
  shift 3
  local records="$work/$name.pemc"
  "${mpi[@]}" -n "$ranks" "$build/pemc-dist" "$config" --output "$records" --overwrite \
      --log-level warn "$@" > "$work/$name.log" 2>&1 \
    || { echo "FAILED: $name (log below)" >&2; cat "$work/$name.log" >&2; return 1; }
  local kind
  for kind in draws estimates; do
    local flags=()
    [[ $kind == estimates ]] && flags=(--estimates)
    # One run goes to stdout, several to one file per run.
    "$build/pemc-report" export "$records" "${flags[@]}" --output-dir "$work/$name.$kind" --overwrite \
      > "$work/$name.$kind.stdout" 2> /dev/null
    if [[ ! -d $work/$name.$kind ]]; then
      mkdir "$work/$name.$kind"
      mv "$work/$name.$kind.stdout" "$work/$name.$kind/single.csv"
    fi
    sorted_without_clock_columns "$work/$name.$kind" > "$out/$name.$kind.csv"
  done
  # Wall-clock and CPU-time fields, and the scratch directory's name, differ between two runs of
  # the same code; everything else must not.
  local report file
  for report in summarize compare diagnose; do
    file=$report
    [[ $report == summarize ]] && file=summary
    "$build/pemc-report" "$report" --format json "$records" 2> /dev/null \
      | jq -S 'walk(if type == "object" then with_entries(select(.key | test("second|time|_s$|per_s|host|date|^path$|^file$"; "i") | not)) else . end)' \
      | sed "s|$work|WORK|g" > "$out/$name.$file.json"
  done
  echo "fingerprinted $name"
}

boltzmann=configs/paper
fingerprint quickstart 4 configs/quickstart.pbtxt --warmup 300 --iterations 1500
fingerprint kou_a_pt 4 configs/paper/kou_a_pt.pbtxt --warmup 500 --iterations 1000 --seeds 2 \
  --set output.estimates_every=100
fingerprint boltzmann28_ct_joint 2 $boltzmann/boltzmann28_ct_joint.pbtxt --warmup 200 --iterations 300 --seeds 2 \
  --set sampler.continuous_tempering.bootstrap.draws_per_round=300 \
  --set sampler.continuous_tempering.bootstrap.warmup=100
fingerprint boltzmann28_ct_gibbs 2 $boltzmann/boltzmann28_ct_gibbs.pbtxt --warmup 200 --iterations 300 --seeds 2 \
  --set sampler.continuous_tempering.bootstrap.draws_per_round=300 \
  --set sampler.continuous_tempering.bootstrap.warmup=100
fingerprint boltzmann28_ais 2 $boltzmann/boltzmann28_ais.pbtxt --warmup 5 --iterations 20 --seeds 2
fingerprint boltzmann28_st 2 $boltzmann/boltzmann28_st.pbtxt --warmup 500 --iterations 2000 --seeds 2
fingerprint boltzmann28_pe_n5_2rpc 4 $boltzmann/boltzmann28_pe_n5.pbtxt --warmup 200 --iterations 400 --seeds 2 \
  --set sampler.pseudo_extended.ranks_per_chain=2
fingerprint kou_a_pt_2rpc 4 configs/paper/kou_a_pt.pbtxt --warmup 300 --iterations 600 --seeds 2 \
  --set sampler.parallel_tempering.ranks_per_chain=2
fingerprint kou_a_ct_gibbs 2 configs/paper/kou_a_ct_gibbs.pbtxt --warmup 300 --iterations 1000 --seeds 2
fingerprint banana_kernels 3 configs/studies/banana_kernels.pbtxt --warmup 200 --iterations 500 --seeds 2
if [[ -x "$build/pemc-stanc" ]]; then
  fingerprint stan_bimodal 2 configs/stan/bimodal.pbtxt --warmup 200 --iterations 500 --seeds 2
fi
echo "fingerprint written to $out"
