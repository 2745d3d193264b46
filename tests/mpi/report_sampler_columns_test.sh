#!/usr/bin/env bash
# The sampler columns and lp__ of pemc-report export, per sampler (src/config/sampler_columns.hpp,
# export_lp.hpp; issue 38 item 1), on a study of every sampler kind on a 2-D Gaussian written by
# pemc-dist under mpirun:
#   1. CmdStan CSV read by rstan: NUTS and MALA have energy__ and a finite E-BFMI; parallel
#      tempering has no treedepth__ or energy__, so rstan's get_bfmi fails loudly instead of
#      returning NaN; no pemc-only column reaches a CmdStan CSV.
#   2. csv and netCDF with --config: lp__ is the target's log density at every exported sample for
#      every sampler (netCDF: at every resampled draw of the weighted ones), extended_lp__ the
#      extended samplers' own density (not lp__).
#   3. csv without --config: an extended sampler's export has no lp__, and a note says why.
# lp__ is checked against -potential of N(mu, diag(s2)) computed here, which the NUTS rows first
# confirm against the potential NUTS itself recorded. Tolerance: both sides sum two positive
# squared terms in double precision, a few ulps apart; 1e-12 relative is far below the error of
# any wrong point, density or constant (>= 1e-6 here).
source "$(dirname "$0")/common.sh"
PY="${PEMC_PYTHON:-/usr/bin/python3}"

HMC='hmc { step_size: 0.4 n_leapfrog: 5 adaptation { enabled: true } }'
NUTS='nuts { step_size: 0.4 adaptation { enabled: true } }'
REF='reference { mean: [0, 0] variance: [4, 4] }'
BASE='base { gaussian { mean: [0, 0] variance: [2, 2] log_zeta: 0 } }'
cat > "$WORK/study.pbtxt" <<CFG
name: "columns"
target { gaussian { mean: [1, -1] variance: [0.5, 2] } }
warmup: 150
iterations: 200
seeds { values: [5, 6] }
init { uniform_radius: 1 }
output { path: "study.pemc" }
runs { name: "nuts" sampler { $NUTS } }
runs { name: "mala" sampler { mala { step_size: 0.3 adaptation { enabled: true } } } }
runs { name: "rwm" sampler { rwm { proposal_scale: 1 adaptation { enabled: true } } } }
runs { name: "pt" sampler { parallel_tempering { $NUTS $REF ladder { kind: LINEAR n_levels: 4 } } } }
runs { name: "st" sampler { simulated_tempering { $HMC $REF ladder { kind: LINEAR n_levels: 4 } } } }
runs { name: "ais" sampler { annealed_importance { $HMC $REF ladder { kind: LINEAR n_levels: 8 } } } }
runs { name: "ct" sampler { continuous_tempering { variant: JOINT $NUTS $BASE } } }
runs { name: "pe" sampler { pseudo_extended { n_pseudo: 3 $NUTS } } }
CFG
(cd "$WORK" && run_mpi 2 "$DIST" study.pbtxt --log-level warn 2> dist.err) \
  || { cat "$WORK/dist.err" >&2; fail "pemc-dist run failed"; }
CONFIG="$WORK/study.pbtxt"

# 1. CmdStan CSV (rstan lists the sampler columns in its own order: compared as sets).
"$REPORT" export "$WORK/study.pemc" --format cmdstan --resample --config "$CONFIG" \
  --output-dir "$WORK/cmdstan" 2> "$WORK/cmdstan.err" || { cat "$WORK/cmdstan.err" >&2; fail "cmdstan export failed"; }
Rscript - "$WORK/cmdstan" <<'R' || fail "rstan check of the sampler columns failed"
dir <- commandArgs(trailingOnly = TRUE)[1]
fit_of <- function(run) suppressMessages(rstan::read_stan_csv(sort(Sys.glob(file.path(dir, paste0(run, "_*.csv"))))))
columns <- function(fit) colnames(rstan::get_sampler_params(fit, inc_warmup = FALSE)[[1]])
want <- list(
  nuts = c("accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__", "energy__"),
  mala = c("accept_stat__", "energy__"),
  rwm = c("accept_stat__"),
  pt = c("accept_stat__", "stepsize__", "n_leapfrog__", "divergent__"),
  st = c("accept_stat__", "n_leapfrog__", "divergent__"),
  ais = c("accept_stat__", "n_leapfrog__", "divergent__"),
  ct = c("accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__"),
  pe = c("accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__"))
for (run in names(want)) {
  fit <- fit_of(run)
  got <- columns(fit)
  if (!setequal(got, want[[run]]) || length(got) != length(want[[run]])) stop(run, ": sampler columns ", paste(got, collapse = ","))
  # Only the model's quantities are parameters (a pemc-only "__" column would be one in rstan).
  pars <- dimnames(as.array(fit))[[3]]
  if (!identical(pars, c("x[1]", "x[2]", "lp__"))) stop(run, ": parameters ", paste(pars, collapse = ","))
  # The tree depth, where written, is a real one (NUTS: >= 1 on every draw).
  if ("treedepth__" %in% got) {
    depth <- do.call(rbind, rstan::get_sampler_params(fit, inc_warmup = FALSE))[, "treedepth__"]
    if (any(depth < 1)) stop(run, ": treedepth__ of 0")
  }
  bfmi <- tryCatch(rstan::get_bfmi(fit), error = function(e) e)
  if ("energy__" %in% got) {
    if (inherits(bfmi, "error") || length(bfmi) != 2 || !all(is.finite(bfmi)) || !all(bfmi > 0))
      stop(run, ": E-BFMI not finite and positive: ", format(bfmi))
  } else if (!inherits(bfmi, "error")) {
    stop(run, ": get_bfmi returned ", format(bfmi), " without an energy__ column")
  }
}
R

# 2. csv and netCDF with --config: lp__ at every sample.
"$REPORT" export "$WORK/study.pemc" --config "$CONFIG" --output-dir "$WORK/csv" 2> "$WORK/csv.err" \
  || { cat "$WORK/csv.err" >&2; fail "csv export failed"; }
! grep -q "note:" "$WORK/csv.err" || fail "a note with --config: $(cat "$WORK/csv.err")"
"$REPORT" export "$WORK/study.pemc" --format netcdf --config "$CONFIG" --output-dir "$WORK/nc" 2> /dev/null \
  || fail "netcdf export failed"
"$PY" - "$WORK/csv" "$WORK/nc" <<'PY' || fail "lp__ check failed"
import csv, sys
import numpy as np
import xarray as xr
csv_dir, nc_dir = sys.argv[1:3]
mu, s2 = np.array([1.0, -1.0]), np.array([0.5, 2.0])
def lp_of(x):  # -potential of N(mu, diag(s2)) without its normalising constant, as pemc's
    return -0.5 * (((x - mu) ** 2) / s2).sum(axis=-1)
def close(a, b):
    return np.all(np.abs(a - b) <= 1e-12 * np.maximum(1.0, np.abs(b)))
extended = {"ct", "pe", "st"}
stats = {
    "nuts": ["accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__", "energy__"],
    "mala": ["accept_stat__", "mala_stepsize__", "energy__"],
    "rwm": ["accept_stat__"],
    "pt": ["accept_stat__", "stepsize__", "n_leapfrog__", "divergent__"],
    "st": ["extended_lp__", "accept_stat__", "n_leapfrog__", "divergent__"],
    "ais": ["accept_stat__", "n_leapfrog__", "divergent__"],
    "ct": ["extended_lp__", "accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__"],
    "pe": ["extended_lp__", "accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__",
           "extended_energy__"],
}
for run, want in stats.items():
    rows = list(csv.DictReader(open(f"{csv_dir}/{run}.csv")))
    head = list(rows[0].keys())
    assert head[head.index("lp__") + 1 : head.index("x[1]")] == want, (run, head)
    x = np.array([[float(r["x[1]"]), float(r["x[2]"])] for r in rows])
    lp = np.array([float(r["lp__"]) for r in rows])
    assert close(lp, lp_of(x)), (run, np.max(np.abs(lp - lp_of(x))))
    if run in extended:
        ext = np.array([float(r["extended_lp__"]) for r in rows])
        assert np.max(np.abs(ext - lp)) > 1e-6, f"{run}: extended_lp__ is lp__"
    # netCDF: the same lp at the posterior's samples, and the sampler's columns by ArviZ names.
    post = xr.open_dataset(f"{nc_dir}/{run}.nc", group="posterior")
    ss = xr.open_dataset(f"{nc_dir}/{run}.nc", group="sample_stats")
    # Weighted runs are resampled (the netcdf default): lp is per draw for every sampler.
    assert ss["lp"].dims == ("chain", "draw"), (run, ss["lp"].dims)
    xs = post["x"].values
    assert not np.isnan(xs).any(), run  # every draw has all its samples
    assert close(ss["lp"].values, lp_of(xs)), run
    assert ("energy" in ss) == ("energy__" in want), run
    assert ("tree_depth" in ss) == ("treedepth__" in want), run
    assert ("extended_lp" in ss) == (run in extended), run
    assert ("extended_energy" in ss) == (run == "pe"), run
    if "tree_depth" in ss:
        assert (ss["tree_depth"].values >= 1).all(), run
    if "energy" in ss:
        assert np.isfinite(ss["energy"].values).all() and np.std(ss["energy"].values) > 0, run
PY

# 3. Without --config an extended sampler's export has no lp__, and says why.
"$REPORT" export "$WORK/study.pemc" --run pe > "$WORK/pe.csv" 2> "$WORK/pe.err" || fail "csv export of pe failed"
head -1 "$WORK/pe.csv" | grep -q ',log_weight,extended_lp__,' || fail "pe header: $(head -1 "$WORK/pe.csv")"
! head -1 "$WORK/pe.csv" | grep -q ',lp__,' || fail "pe header has lp__ without --config"
grep -q "note: run 'pe' (pseudo_extended) is exported without lp__" "$WORK/pe.err" \
  || fail "no note on the missing lp__: $(cat "$WORK/pe.err")"
echo "3 passed, 0 failed"
