#!/usr/bin/env bash
# pemc's NUTS against RStan 2.21's NUTS on posteriordb posteriors: minimum bulk ESS per CPU second,
# one core each, the same Stan model and data.
#
# Usage:
#   PEMC_BIN=build tests/bench/stan_vs_rstan.sh [-p PAIRS] [-f FIRST] [-d POSTERIORDB] [-w WORKDIR] \
#       [--propto true|false] [--pooled default|true|false] POSTERIOR...
#   e.g. tests/bench/stan_vs_rstan.sh -p 3 eight_schools-eight_schools_noncentered diamonds-diamonds
#
# Needs: pemc built (pemc-dist, pemc-report; found in $PEMC_BIN, default build/), its Stan toolchain
# (docs/stan.md), and R with rstan 2.21, posterior and jsonlite:
#   apt-get install r-cran-rstan r-cran-posterior r-cran-jsonlite
# plus /usr/bin/time (apt-get install time) and unzip.
#
# What runs, per posterior:
#   - both samplers: 4 chains one after another in one process on one core, 1000 warmup + 1000
#     kept iterations, diagonal metric adapted in Stan's windows, target acceptance 0.8, initial
#     step size 1, max tree depth 10 (Stan's defaults);
#   - pemc with propto (drops constants, as Stan's sampler does) as chosen by --propto (default
#     true), and with its chains' warmup pooled (adaptation.pooled, docs/guide.md#pooled-warmup:
#     warmup 1000 is then the maximum) as chosen by --pooled: default (pemc's default, pooled for
#     these 4-chain runs), true, or false (each chain adapts alone, as Stan does);
#   - compilation is done once, before anything is timed (pemc's cache, rstan's auto_write .rds);
#   - PAIRS times (default 3): pemc, then RStan, interleaved so that both see the same machine
#     load; pair i uses sampling(seed = i) and pemc seeds 4i-3..4i (one per chain); pairs are
#     numbered from FIRST (default 1), so that more seeds can be added to an earlier run.
# Measured:
#   - min bulk ESS over the quantities the posteriordb posterior lists (parameters and transformed
#     parameters): pemc from `pemc-report reference` (its "ess", the bulk ESS of R posterior's
#     ess_bulk), RStan from posterior::ess_bulk (tests/bench/stan_vs_rstan.R);
#   - pemc CPU: user+sys of the whole pemc-dist process (start, MPI, model and data loading, output
#     included) and, as "sampling", that minus the user+sys of the same process run with
#     `--warmup 0 --iterations 1` (the same start-up and loading, 4 draws). (`--validate` is not
#     that baseline: it builds the target once, a run builds it twice.) pemc's own per-chain
#     wall_seconds are wall-clock times, inflated on a loaded machine, so they are not used;
#   - RStan CPU: user+sys of the R process during sampling() (compile excluded) and, as
#     "sampling", the sum of get_elapsed_time() (Stan 2.21 times warmup and sampling of each
#     chain with clock(), i.e. CPU time).
#   - gradient evaluations (warmup included) and sampling seconds per gradient: the cost of one
#     leapfrog step, model and sampler, free of the ESS's seed-to-seed noise;
# Printed: one Markdown row per pair, the median ratio per posterior, where
#   ratio = (pemc min ESS / pemc process CPU s) / (RStan min ESS / RStan CPU s)
# (>= 1 means pemc is at least as efficient; ratio_sampling uses the sampling-only times), and a
# "pooled" row over the pairs: sum of min ESS / sum of CPU s on each side, and its two factors,
#   ESS per gradient (pemc / RStan): the algorithms' efficiency, which does not depend on the
#     machine's load (each run is a pure function of its seed), and
#   µs per gradient (pemc / RStan): the cost of a leapfrog step, which does.
# The min bulk ESS of one pair varies by ~20% from seed to seed; the pooled row over many pairs is
# the steadier estimate.
# Raw outputs are kept under WORKDIR (default /tmp/pemc-stan-bench).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
PEMC_BIN=${PEMC_BIN:-build}
pairs=3
first=1
pdb=${POSTERIORDB:-$here/../../../shared/posteriordb}
work=/tmp/pemc-stan-bench
propto=true
pooled=default
posteriors=()
while (($#)); do
  case $1 in
    -p) pairs=$2; shift 2 ;;
    -f) first=$2; shift 2 ;;
    -d) pdb=$2; shift 2 ;;
    -w) work=$2; shift 2 ;;
    --propto) propto=$2; shift 2 ;;
    --pooled) pooled=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) posteriors+=("$1"); shift ;;
  esac
done
case $pooled in
  default) pooled_field="" ;;
  true|false) pooled_field=" pooled: $pooled" ;;
  *) echo "stan_vs_rstan.sh: --pooled must be default, true or false, got '$pooled'" >&2; exit 2 ;;
esac
((${#posteriors[@]})) || { echo "no posterior given (try --help)" >&2; exit 2; }
for b in pemc-dist pemc-report; do
  [[ -x $PEMC_BIN/$b ]] || { echo "$PEMC_BIN/$b not found: set PEMC_BIN" >&2; exit 2; }
done
pdb=$(cd "$pdb" && pwd)
mkdir -p "$work"

# A field of a posteriordb posterior's JSON (model_name, data_name).
field() { Rscript -e "cat(jsonlite::fromJSON('$pdb/posteriors/$1.json')\$$2)"; }

# pemc-report's JSON reduced to numbers, through R's jsonlite (R is needed anyway).
min_ess() {  # min "ess" over the "mean" rows of pemc-report reference --format json
  Rscript -e 'j <- jsonlite::fromJSON(file("stdin"), simplifyVector = FALSE)
    rows <- list(); walk <- function(x) { if (is.list(x)) { if (!is.null(x$ess) && identical(x$moment, "mean")) rows[[length(rows) + 1]] <<- x; for (y in x) walk(y) } }
    walk(j); e <- vapply(rows, function(r) as.numeric(r$ess), 1); n <- vapply(rows, function(r) as.character(r$name), "")
    cat(sprintf("%.1f %s %d\n", min(e), n[which.min(e)], length(e)))'
}
sum_wall() {  # sums of the chains' wall_seconds and n_gradient_evals of pemc-report summarize
  Rscript -e 'j <- jsonlite::fromJSON(file("stdin"), simplifyVector = FALSE)
    s <- 0; g <- 0; walk <- function(x) { if (is.list(x)) { if (!is.null(x$wall_seconds) && !is.null(x$n_gradient_evals)) { s <<- s + as.numeric(x$wall_seconds); g <<- g + as.numeric(x$n_gradient_evals) } else for (y in x) walk(y) } }
    walk(j); cat(sprintf("%.3f %.0f\n", s, g))'
}

echo "| posterior | pair | pemc min bulk ESS | pemc CPU s (process / sampling) | pemc gradients / µs each | RStan min bulk ESS | RStan CPU s (process / sampling) | RStan gradients / µs each | ratio of ESS/s (process) | ratio (sampling) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for post in "${posteriors[@]}"; do
  model=$(field "$post" model_name); dataname=$(field "$post" data_name)
  dir=$work/$post; mkdir -p "$dir"
  unzip -o -q "$pdb/data/$dataname.json.zip" -d "$dir"
  data=$dir/$dataname.json
  ratios=(); ratios_s=(); us_ratios=()
  sums=(0 0 0 0 0 0 0 0)  # pemc ESS, CPU, sampling CPU, gradients; RStan the same
  for ((i = first; i < first + pairs; i++)); do
    # pemc: the config the comparison needs (Stan's defaults, see the header).
    cfg=$dir/pemc-$i.pbtxt out=$dir/pemc-$i.pemc
    rm -f "$out"
    cat > "$cfg" <<EOF
name: "$post"
target { stan { model_file: "$pdb/models/$model.stan" data_file: "$data" propto: $propto } }
sampler { nuts { step_size: 1 max_tree_depth: 10 metric: DIAGONAL adaptation { enabled: true adapt_metric: true target_accept: 0.8$pooled_field } } }
warmup: 1000
iterations: 1000
seeds { values: [$((4 * i - 3)), $((4 * i - 2)), $((4 * i - 1)), $((4 * i))] }
output { path: "$out" }
EOF
    if ((i == first)); then
      # Compile both models (or find them in their caches) before timing anything: --validate
      # builds pemc's target, the R script's "compile" mode rstan's.
      "$PEMC_BIN/pemc-dist" "$cfg" --validate > "$dir/pemc-compile.log" 2>&1
      Rscript "$here/stan_vs_rstan.R" "$pdb" "$post" "$data" 1 "$work/rstan-models" compile
    fi
    /usr/bin/time -f "%U %S" -o "$dir/pemc-$i.time" "$PEMC_BIN/pemc-dist" "$cfg" > "$dir/pemc-$i.log" 2>&1
    p_cpu=$(awk '{printf "%.3f", $1 + $2}' "$dir/pemc-$i.time")
    # exit 3 means a |z| > 4 against the reference: still report the ESS, and say so below.
    "$PEMC_BIN/pemc-report" reference "$out" --posteriordb "$pdb" --posterior "$post" --worst 1000000 --format json \
      > "$dir/pemc-$i.reference.json" || echo "note: pemc run $i of $post fails the reference check (exit $?)" >&2
    read -r p_ess p_min_name p_n < <(min_ess < "$dir/pemc-$i.reference.json")
    "$PEMC_BIN/pemc-report" summarize "$out" --no-truth --format json > "$dir/pemc-$i.summary.json"
    read -r _ p_grad < <(sum_wall < "$dir/pemc-$i.summary.json")
    # Start-up cost: the same process with (almost) no sampling (and no pooled warmup, which needs
    # a warmup).
    sed 's/ pooled: true//' "$cfg" > "$dir/pemc-$i.startup.pbtxt"
    /usr/bin/time -f "%U %S" -o "$dir/pemc-$i.startup.time" "$PEMC_BIN/pemc-dist" "$dir/pemc-$i.startup.pbtxt" --warmup 0 \
      --iterations 1 --output "$dir/pemc-$i.startup.pemc" --overwrite > /dev/null 2>&1
    p_samp=$(awk -v t="$p_cpu" '{ printf "%.3f", t - $1 - $2 }' "$dir/pemc-$i.startup.time")

    # RStan, the same seed index.
    Rscript "$here/stan_vs_rstan.R" "$pdb" "$post" "$data" "$i" "$work/rstan-models" > "$dir/rstan-$i.out" 2> "$dir/rstan-$i.log"
    read -r _ r_ess r_cpu r_samp r_min_name r_grad < "$dir/rstan-$i.out"

    ratio=$(awk -v a="$p_ess" -v b="$p_cpu" -v c="$r_ess" -v d="$r_cpu" 'BEGIN { printf "%.2f", (a / b) / (c / d) }')
    ratio_s=$(awk -v a="$p_ess" -v b="$p_samp" -v c="$r_ess" -v d="$r_samp" 'BEGIN { printf "%.2f", (a / b) / (c / d) }')
    # Sampling time per gradient evaluation (µs): the cost of the model plus the sampler's own.
    p_us=$(awk -v t="$p_samp" -v g="$p_grad" 'BEGIN { printf "%.2f", 1e6 * t / g }')
    r_us=$(awk -v t="$r_samp" -v g="$r_grad" 'BEGIN { printf "%.2f", 1e6 * t / g }')
    ratios+=("$ratio"); ratios_s+=("$ratio_s"); us_ratios+=("$(awk -v a="$p_us" -v b="$r_us" 'BEGIN { printf "%.2f", a / b }')")
    read -r -a sums < <(awk -v s="${sums[*]}" -v v="$p_ess $p_cpu $p_samp $p_grad $r_ess $r_cpu $r_samp $r_grad" \
      'BEGIN { n = split(s, a, " "); split(v, b, " "); for (k = 1; k <= n; k++) printf "%s%.6f", (k > 1 ? " " : ""), a[k] + b[k]; print "" }')
    echo "| $post | $i | $p_ess ($p_min_name) | $p_cpu / $p_samp | $p_grad / $p_us | $r_ess ($r_min_name) | $r_cpu / $r_samp | $r_grad / $r_us | $ratio | $ratio_s |"
  done
  med() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
  echo "| $post | median | | | µs/grad pemc/RStan $(med "${us_ratios[@]}") | | | | $(med "${ratios[@]}") | $(med "${ratios_s[@]}") |"
  read -r -a sums < <(awk -v s="${sums[*]}" 'BEGIN { split(s, a, " "); printf "%.1f %.3f %.3f %.0f %.1f %.3f %.3f %.0f\n", a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8] }')
  echo "| $post | pooled ($pairs pairs) | ${sums[0]} | ${sums[1]} / ${sums[2]} | ESS/grad pemc/RStan $(awk -v a="${sums[0]}" -v b="${sums[3]}" -v c="${sums[4]}" -v d="${sums[7]}" 'BEGIN { printf "%.3f", (a / b) / (c / d) }') | ${sums[4]} | ${sums[5]} / ${sums[6]} | µs/grad pemc/RStan $(awk -v a="${sums[2]}" -v b="${sums[3]}" -v c="${sums[6]}" -v d="${sums[7]}" 'BEGIN { printf "%.3f", (a / b) / (c / d) }') | $(awk -v a="${sums[0]}" -v b="${sums[1]}" -v c="${sums[4]}" -v d="${sums[5]}" 'BEGIN { printf "%.2f", (a / b) / (c / d) }') | $(awk -v a="${sums[0]}" -v b="${sums[2]}" -v c="${sums[4]}" -v d="${sums[6]}" 'BEGIN { printf "%.2f", (a / b) / (c / d) }') |"
done
echo
echo "load: $(uptime | sed 's/.*load average/load average/'); $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'); propto: $propto; pooled warmup: $pooled"
