#!/usr/bin/env bash
# pemc-report summarize against posterior and rstan (issue 38 items 3 and 4): a NUTS run of 4
# chains on a 3-D Gaussian with scales 0.1 .. 10 and a unit metric, whose NUTS hits a small
# max_tree_depth on part of its draws, is summarised with --format json and exported as CmdStan
# CSV; R reads the CSVs and computes
#   posterior::summarise_draws (mean, sd, q5, q50, q95 by quantile2, mcse_mean, ess_bulk,
#   ess_tail, rhat) of lp__ and every x[i],
#   rstan::get_bfmi per chain, and the divergences and draws at the maximum tree depth per chain,
# which must equal summarize's numbers. Tolerance 1e-9 relative: both sides compute in double
# precision from the same draws (the CSVs hold them exactly, in the shortest round-trip form), and
# differ only in summation order and R's own rounding (FFT autocovariances, qnorm). Then the table
# (lp__ first, the chain table, the tree-depth warning), --vars, --format csv and a bad --vars.
source "$(dirname "$0")/common.sh"

cat > "$WORK/run.pbtxt" <<'CFG'
name: "summ"
target { gaussian { mean: [1, -1, 0] variance: [0.01, 1, 100] } }
warmup: 300
iterations: 500
seeds { values: [21, 22, 23, 24] }
init { uniform_radius: 1 }
output { path: "summ.pemc" }
sampler { nuts { step_size: 0.1 max_tree_depth: 5 metric: UNIT adaptation { enabled: true } } }
CFG
(cd "$WORK" && run_mpi 2 "$DIST" run.pbtxt --log-level warn 2> dist.err) \
  || { cat "$WORK/dist.err" >&2; fail "pemc-dist run failed"; }

"$REPORT" summarize "$WORK/summ.pemc" --format json > "$WORK/summ.json" || fail "summarize --format json"
"$REPORT" export "$WORK/summ.pemc" --format cmdstan --output-dir "$WORK/cmdstan" 2> "$WORK/export.err" \
  || { cat "$WORK/export.err" >&2; fail "cmdstan export failed"; }

# R has no JSON reader here: the run's quantities and chains go to R as CSV (17 digits).
"${PEMC_PYTHON:-/usr/bin/python3}" - "$WORK/summ.json" "$WORK" <<'PY' || fail "summarize JSON"
import csv, json, sys
run = json.load(open(sys.argv[1]))["posterior"][0]
keys = ["name", "mean", "sd", "q5", "q50", "q95", "mcse_mean", "ess_bulk", "ess_tail", "rhat"]
with open(sys.argv[2] + "/quantities.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(keys)
    for q in run["quantities"]:
        w.writerow([q["name"]] + [repr(q[k]) for k in keys[1:]])
keys = ["chain_id", "draws", "ebfmi", "n_divergent", "n_max_tree_depth", "max_tree_depth"]
with open(sys.argv[2] + "/chains.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(keys)
    for c in run["chains"]:
        w.writerow([repr(c[k]) for k in keys])
PY
Rscript - "$WORK/cmdstan" "$WORK" <<'R' || fail "summarize differs from posterior / rstan"
args <- commandArgs(trailingOnly = TRUE)
suppressMessages(library(posterior))
fit <- suppressMessages(rstan::read_stan_csv(sort(Sys.glob(file.path(args[1], "*.csv")))))
quantities <- read.csv(file.path(args[2], "quantities.csv"), stringsAsFactors = FALSE)
chains <- read.csv(file.path(args[2], "chains.csv"))
draws <- as_draws_array(as.array(fit))
ref <- summarise_draws(draws, "mean", "sd", ~quantile2(.x, probs = c(0.05, 0.5, 0.95)),
                       "mcse_mean", "ess_bulk", "ess_tail", "rhat")
names_got <- quantities$name
if (!identical(names_got, c("lp__", "x[1]", "x[2]", "x[3]")))
  stop("quantities ", paste(names_got, collapse = ","))
worst <- 0
check <- function(what, a, b) {
  rel <- abs(a - b) / max(abs(b), 1e-300)
  worst <<- max(worst, rel)
  if (!is.finite(a) || rel > 1e-9) stop(sprintf("%s: summarize %.17g, R %.17g", what, a, b))
}
for (i in seq_len(nrow(quantities))) {
  q <- quantities[i, ]
  r <- ref[ref$variable == q$name, ]
  for (k in c("mean", "sd", "q5", "q50", "q95", "mcse_mean", "ess_bulk", "ess_tail", "rhat"))
    check(paste(q$name, k), q[[k]], r[[k]])
  cat(sprintf("%-5s mean %.6g (R %.6g) mcse %.4g (R %.4g) q5 %.6g (R %.6g) ess_bulk %.1f (R %.1f) rhat %.5f (R %.5f)\n",
              q$name, q$mean, r$mean, q$mcse_mean, r$mcse_mean, q$q5, r$q5, q$ess_bulk, r$ess_bulk,
              q$rhat, r$rhat))
}
bfmi <- rstan::get_bfmi(fit)
params <- rstan::get_sampler_params(fit, inc_warmup = FALSE)
saturated <- 0
for (i in seq_len(nrow(chains))) {
  c <- chains[i, ]
  check(paste("chain", c$chain_id, "E-BFMI"), c$ebfmi, bfmi[i])
  p <- params[[i]]
  if (c$n_divergent != sum(p[, "divergent__"])) stop("chain ", c$chain_id, ": divergences")
  if (c$max_tree_depth != 5) stop("chain ", c$chain_id, ": max_tree_depth ", c$max_tree_depth)
  if (c$n_max_tree_depth != sum(p[, "treedepth__"] >= 5)) stop("chain ", c$chain_id, ": tree depth")
  if (c$draws != nrow(p)) stop("chain ", c$chain_id, ": draws")
  saturated <- saturated + c$n_max_tree_depth
  cat(sprintf("chain %d: E-BFMI %.6f (rstan %.6f), at max depth %d, divergent %d\n", c$chain_id,
              c$ebfmi, bfmi[i], c$n_max_tree_depth, c$n_divergent))
}
if (saturated == 0) stop("no draw at the maximum tree depth: the run does not exercise the count")
cat(sprintf("largest relative difference: %.3g\n", worst))
R

# The table: header, chain table, lp__ first, the tree-depth warning once.
table=$("$REPORT" summarize "$WORK/summ.pemc")
grep -q "^run summ (nuts on gaussian): 4 chains x 500 draws after 300 warmup" <<< "$table" \
  || { echo "$table"; fail "table header"; }
grep -q "E-BFMI" <<< "$table" && grep -q "at depth 5" <<< "$table" || { echo "$table"; fail "chain table"; }
first=$(grep -A1 "ESS_bulk" <<< "$table" | tail -1 | awk '{print $1}')
[ "$first" = "lp__" ] || { echo "$table"; fail "lp__ is not the first quantity"; }
[ "$(grep -c 'WARNING: run summ, tree depth: ' <<< "$table")" -eq 1 ] || { echo "$table"; fail "tree-depth warning"; }

# --vars: a variable's name selects its elements; exact names; lp__.
csv=$("$REPORT" summarize "$WORK/summ.pemc" --format csv --vars 'x[3],lp__')
[ "$(head -1 <<< "$csv")" = "run_id,name,mean,mcse_mean,sd,q5,q50,q95,ess_bulk,ess_tail,rhat" ] || fail "csv header: $csv"
[ "$(cut -d, -f2 <<< "$csv" | tail -n +2 | tr '\n' ' ')" = "x[3] lp__ " ] || fail "csv rows: $csv"
[ "$("$REPORT" summarize "$WORK/summ.pemc" --format csv --vars x | tail -n +2 | wc -l)" -eq 3 ] \
  || fail "--vars x does not select x[1..3]"
if "$REPORT" summarize "$WORK/summ.pemc" --vars 'x,theta' > /dev/null 2> "$WORK/bad.err"; then
  fail "an unknown --vars name was accepted"
fi
grep -q "run 'summ': --vars: no quantity or variable named 'theta'; the run has: lp__, x\[1..3\]" "$WORK/bad.err" \
  || { cat "$WORK/bad.err"; fail "unknown --vars message"; }
"$REPORT" diagnose "$WORK/summ.pemc" --vars 'x[2]' 2> /dev/null | grep -c "^  x\[2\] " > /dev/null || fail "diagnose --vars"
echo "ok: summarize equals posterior::summarise_draws and rstan::get_bfmi; table, --vars, csv"
