#!/usr/bin/env bash
# Pseudo-extended NUTS (N = 5, its defaults for a Stan model: the reference path and the pooled
# warmup) against plain NUTS on posteriordb's unimodal posteriors: CPU seconds per minimum bulk
# ESS, the ratio PE / NUTS (issue 36, item 3: at most 10). The table in
# docs/pseudo-extended-defaults.md#the-reference-path comes from this script.
#
# Usage:
#   PEMC_BIN=build tests/bench/pe_vs_nuts.sh [-s "1 5 9"] [-k 5] [-w WORKDIR] [POSTERIOR ...]
#     -s  first seeds of the seed sets (each set: 4 chains, seeds s..s+3), default "1 5 9"
#     -k  alternating repeats of each pair of runs, default 3
#   POSTERIORs default to the nine below (diamonds, earnings and one_comp_mm_elim_abs take NUTS
#   alone 5-20 CPU minutes each).
# Needs pemc built (pemc-dist, pemc-report, pemc-stan in $PEMC_BIN, default build/), mpirun and
# ../shared/posteriordb (PEMC_SHARED_DIR).
#
# Each run: 4 chains on one rank, warmup 1000 (the maximum; the pooled warmups end when the
# chains agree), 1000 draws, NUTS adapting a diagonal metric at posteriordb's adapt_delta, PE with
# the same kernel settings. A repeat runs the same config with the same seeds, so it makes the same
# draws: the ESS is fixed and only the CPU time varies with the machine's other work, so the
# fastest of the k repeats is taken. CPU: the chains' own (`pemc-report summarize`), model
# compilation and the mode search excluded. ESS: the smallest bulk ESS over the means and second
# moments that `pemc-report reference` checks against the reference draws (PE's through its
# weights); max |z| is that check's, over every seed set.
set -euo pipefail

PEMC_BIN=$(realpath "${PEMC_BIN:-build}")
SHARED=${PEMC_SHARED_DIR:-$(dirname "$0")/../../../shared}
DB=$(realpath "$SHARED/posteriordb")
seed_sets="1 5 9" repeats=3 work=/tmp/pemc-pe-vs-nuts
while (($#)); do
  case $1 in
    -s) seed_sets=$2; shift 2 ;;
    -k) repeats=$2; shift 2 ;;
    -w) work=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) break ;;
  esac
done
posteriors=("$@")
((${#posteriors[@]})) || posteriors=(arma-arma11 eight_schools-eight_schools_noncentered
  garch-garch11 gp_pois_regr-gp_pois_regr hmm_example-hmm_example kidiq-kidscore_momiq
  mesquite-logmesquite sblrc-blr low_dim_gauss_mix-low_dim_gauss_mix)
mkdir -p "$work"
export PEMC_STAN_CACHE=${PEMC_STAN_CACHE:-$PEMC_BIN/stan-cache}

sampler_block() {  # sampler_block nuts|pe ADAPT_DELTA
  local nuts="nuts { step_size: 0.1 metric: DIAGONAL adaptation { enabled: true adapt_metric: true target_accept: $2 } }"
  case $1 in
    nuts) echo "$nuts" ;;
    pe) echo "pseudo_extended { n_pseudo: 5 $nuts }" ;;
  esac
}

# One line per run: posterior, sampler, seed set, repeat, CPU s, min bulk ESS, max |z|, Kish ESS.
results=$work/results.txt
: > "$results"
for p in "${posteriors[@]}"; do
  read -r model data < <(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['model_name'], d['data_name'])" "$DB/posteriors/$p.json")
  accept=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d.get('inference', {}).get('method_arguments', {}).get('control', {}).get('adapt_delta', 0.8))" "$DB/reference/$p.info.json")
  python3 -c "import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" "$DB/data/$data.json.zip" "$work"
  "$PEMC_BIN/pemc-stan" build "$DB/models/$model.stan" > "$work/$p.build.log" 2>&1
  for s in $seed_sets; do
    for k in $(seq "$repeats"); do
      for sampler in nuts pe; do
        name=$p.$sampler.s$s.k$k
        cat > "$work/$name.pbtxt" <<CFG
name: "$p"
target { stan { model_file: "$DB/models/$model.stan" data_file: "$work/$data.json" } }
warmup: 1000
iterations: 1000
seeds { values: [$s, $((s + 1)), $((s + 2)), $((s + 3))] }
output { path: "$work/$name.pemc" }
sampler { $(sampler_block $sampler "$accept") }
CFG
        rm -f "$work/$name.pemc"
        mpirun --allow-run-as-root --oversubscribe -n 1 "$PEMC_BIN/pemc-dist" "$work/$name.pbtxt" \
          > "$work/$name.log" 2>&1 || { echo "$name: run failed (see $work/$name.log)" >&2; exit 1; }
        "$PEMC_BIN/pemc-report" summarize "$work/$name.pemc" --format json > "$work/$name.sum.json"
        "$PEMC_BIN/pemc-report" reference "$work/$name.pemc" --posteriordb "$DB" --posterior "$p" \
          --format json > "$work/$name.ref.json" || true
        python3 - "$work/$name.sum.json" "$work/$name.ref.json" "$p" "$sampler" "$s" "$k" >> "$results" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
checks = json.load(open(sys.argv[2]))["checks"]
cpu = sum(r["cpu_seconds"] for r in runs)
ess = min(c["ess"] for c in checks)
z = max(abs(c["z"]) for c in checks)
kish = [r["estimates"].get("kish_ess_per_draw") for r in runs]
kish = sum(kish) / len(kish) if all(v is not None for v in kish) else float("nan")
print(sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], cpu, ess, z, kish)
PY
      done
    done
  done
done

python3 - "$results" <<'PY'
import collections, math, sys
rows = [l.split() for l in open(sys.argv[1])]
best = {}  # (posterior, sampler, seed set) -> (fastest CPU, ESS, |z|, Kish)
for p, sampler, s, k, cpu, ess, z, kish in rows:
    key = (p, sampler, s)
    cpu, ess, z, kish = float(cpu), float(ess), float(z), float(kish)
    if key not in best or cpu < best[key][0]:
        best[key] = (cpu, ess, z, kish)
posteriors = list(dict.fromkeys(r[0] for r in rows))
sets = list(dict.fromkeys(r[2] for r in rows))
print("| posterior | NUTS min bulk ESS / CPU s | PE min bulk ESS / CPU s | Kish ESS per draw (of 5) "
      "| max \\|z\\| (PE) | PE/NUTS CPU per ESS, seeds " + " / ".join(f"{s}-{int(s) + 3}" for s in sets) + " |")
print("|---|---|---|---|---|---|")
worst = 0.0
for p in posteriors:
    n0, e0 = best[(p, "nuts", sets[0])], best[(p, "pe", sets[0])]
    ratios = []
    for s in sets:
        n, e = best[(p, "nuts", s)], best[(p, "pe", s)]
        ratios.append((e[0] / e[1]) / (n[0] / n[1]))
    worst = max(worst, *ratios)
    z = max(best[(p, "pe", s)][2] for s in sets)
    print(f"| {p} | {n0[1]:.0f} / {n0[0]:.2f} | {e0[1]:.0f} / {e0[0]:.2f} | {e0[3]:.2f} | {z:.2f} | "
          + " / ".join(f"{r:.1f}x" for r in ratios) + " |")
print(f"\nlargest PE/NUTS ratio: {worst:.1f}x")
PY
