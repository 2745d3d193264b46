#!/usr/bin/env bash
# pemc-report export end to end: a plain NUTS run and a study with a pseudo-extended run, written
# by pemc-dist under mpirun, exported as CSV, CmdStan CSV and ArviZ netCDF and read back by the
# tools they are for: rstan::read_stan_csv and posterior (R), xarray (Python), with names, sizes
# and values checked against pemc's own CSV export. Then the refusals (weighted draws to CmdStan
# without --resample, ragged study tables, non-empty output directories, unknown formats) and
# damaged files (what is intact is exported, a warning, exit 1).
source "$(dirname "$0")/common.sh"
passed=0

cat > "$WORK/nuts.pbtxt" <<'CFG'
name: "gauss"
target { gaussian { mean: [1, -1, 0.5] } }
sampler { nuts { step_size: 0.3 metric: DIAGONAL adaptation { enabled: true adapt_metric: true } } }
warmup: 200
iterations: 400
seeds { values: [3, 4] }
output { path: "nuts.pemc" write_warmup: true }
CFG
cat > "$WORK/study.pbtxt" <<'CFG'
name: "mini_quickstart"
target { mixture { preset: KOU_A } }
warmup: 200
iterations: 300
seeds { values: [11, 12] }
init { uniform_box { lower: 0 upper: 10 } }
output { path: "study.pemc" }
runs {
  name: "pe_n5"
  sampler { pseudo_extended { n_pseudo: 5 beta_lower: 0.001 beta_upper: 1
            nuts { step_size: 0.1 metric: DIAGONAL adaptation { enabled: true adapt_metric: true } } } }
}
runs {
  name: "nuts"
  sampler { nuts { step_size: 0.1 metric: DIAGONAL adaptation { enabled: true adapt_metric: true } } }
}
CFG
(cd "$WORK" && run_mpi 2 "$DIST" nuts.pbtxt --log-level warn && run_mpi 2 "$DIST" study.pbtxt --log-level warn) \
  || fail "pemc-dist runs failed"

# 1. CmdStan CSV read by rstan::read_stan_csv and posterior: names, sizes, and every value equal
#    to pemc's CSV export (lp__ = -potential).
"$REPORT" export "$WORK/nuts.pemc" > "$WORK/nuts.csv" || fail "csv export failed"
head -1 "$WORK/nuts.csv" | grep -q ',lp__,.*,x\[1\],x\[2\],x\[3\]$' || fail "csv header: $(head -1 "$WORK/nuts.csv")"
"$REPORT" export "$WORK/nuts.pemc" --format cmdstan --output-dir "$WORK/cmdstan" 2> "$WORK/cmdstan.err" \
  || { cat "$WORK/cmdstan.err" >&2; fail "cmdstan export failed"; }
ls "$WORK/cmdstan"/gauss_*.csv > /dev/null || fail "no gauss_<chain>.csv files"
Rscript - "$WORK/cmdstan" "$WORK/nuts.csv" <<'R' || fail "rstan/posterior check failed"
args <- commandArgs(trailingOnly = TRUE)
files <- sort(Sys.glob(file.path(args[1], "gauss_*.csv")))
stopifnot(length(files) == 2)
fit <- suppressMessages(rstan::read_stan_csv(files))
a <- as.array(fit)
stopifnot(identical(dimnames(a)[[3]], c("x[1]", "x[2]", "x[3]", "lp__")))
stopifnot(dim(a)[1] == 400, dim(a)[2] == 2)
pemc <- read.csv(args[2], check.names = FALSE)
chains <- sort(unique(pemc$chain_id))
for (k in seq_along(chains)) {
  rows <- pemc[pemc$chain_id == chains[k], ]
  rows <- rows[order(rows$iteration), ]
  for (v in c("x[1]", "x[2]", "x[3]", "lp__"))
    stopifnot(isTRUE(all.equal(as.numeric(a[, k, v]), rows[[v]], tolerance = 1e-12)))
}
sp <- rstan::get_sampler_params(fit, inc_warmup = FALSE)
stopifnot(all(c("accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__",
                "energy__") %in% colnames(sp[[1]])))
d <- posterior::as_draws_array(a)
stopifnot(posterior::ndraws(d) == 800, posterior::nchains(d) == 2)
s <- posterior::summarise_draws(d)
stopifnot(isTRUE(all.equal(as.numeric(s$mean[s$variable == "x[1]"]), mean(pemc[["x[1]"]]),
                           tolerance = 1e-12)))
stopifnot(all(as.numeric(s$rhat) < 1.1))
R
# With warmup: CmdStan's save_warmup layout, which rstan splits at num_warmup.
"$REPORT" export "$WORK/nuts.pemc" --format cmdstan --include-warmup --output-dir "$WORK/cmdstan_w" 2> /dev/null \
  || fail "cmdstan --include-warmup failed"
Rscript - "$WORK/cmdstan_w" <<'R' || fail "rstan could not read the export with warmup"
fit <- suppressMessages(rstan::read_stan_csv(sort(Sys.glob(file.path(commandArgs(TRUE)[1], "*.csv")))))
stopifnot(dim(as.array(fit))[1] == 400, fit@sim$warmup2[1] == 200)
R
passed=$((passed + 1))

# 2. A study of two shapes: never one ragged table; one consistent CSV per run; CmdStan refuses
#    the weighted run unless resampled, and the resampled files read in rstan.
set +e
"$REPORT" export "$WORK/study.pemc" > "$WORK/ragged.csv" 2> "$WORK/ragged.err"
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "a study of different columns to stdout: exit $rc, expected 1"
grep -q -- "--output-dir" "$WORK/ragged.err" || fail "no hint to use --output-dir: $(cat "$WORK/ragged.err")"
[ ! -s "$WORK/ragged.csv" ] || fail "rows written before the refusal"
# --config: lp__ of the pseudo-extended samples is the target's (report_sampler_columns_test.sh).
"$REPORT" export "$WORK/study.pemc" --output-dir "$WORK/csv" --config "$WORK/study.pbtxt" 2> /dev/null \
  || fail "csv --output-dir failed"
for f in "$WORK/csv/pe_n5.csv" "$WORK/csv/nuts.csv"; do
  awk -F, 'NR == 1 { n = NF } NF != n { exit 1 }' "$f" || fail "$f has ragged rows"
done
head -1 "$WORK/csv/pe_n5.csv" | grep -q '^run_id,chain_id,seed,iteration,warmup,sample,log_weight,lp__' \
  || fail "pe_n5.csv lacks sample/log_weight: $(head -1 "$WORK/csv/pe_n5.csv")"
[ "$(tail -n +2 "$WORK/csv/pe_n5.csv" | wc -l)" -eq $((2 * 300 * 5)) ] || fail "pe_n5.csv rows"
set +e
"$REPORT" export "$WORK/study.pemc" --format cmdstan --output-dir "$WORK/cs" 2> "$WORK/cs.err"
rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q -- "--resample" "$WORK/cs.err" || fail "weighted run to CmdStan not refused (exit $rc)"
"$REPORT" export "$WORK/study.pemc" --format cmdstan --resample --seed 3 --output-dir "$WORK/cs" --config "$WORK/study.pbtxt" \
  --overwrite 2> /dev/null || fail "cmdstan --resample failed"
Rscript - "$WORK/cs" <<'R' || fail "rstan could not read the resampled export"
files <- sort(Sys.glob(file.path(commandArgs(trailingOnly = TRUE)[1], "pe_n5_*.csv")))
stopifnot(length(files) == 2)
fit <- suppressMessages(rstan::read_stan_csv(files))
a <- as.array(fit)
stopifnot(dim(a)[1] == 300, identical(dimnames(a)[[3]], c("x[1]", "x[2]", "lp__")))
stopifnot(all(is.finite(a)))
R
passed=$((passed + 1))

# 3. ArviZ netCDF read by xarray: groups, dims and values; the weighted run resampled by default,
#    its weights kept with --no-resample (report_inference_data_test.sh checks the whole schema).
"$REPORT" export "$WORK/nuts.pemc" --format netcdf --include-warmup --output-dir "$WORK/nc" 2> /dev/null \
  || fail "netcdf export failed"
"$REPORT" export "$WORK/study.pemc" --format netcdf --no-resample --output-dir "$WORK/nc2" 2> /dev/null \
  || fail "netcdf study export failed"
"$REPORT" export "$WORK/study.pemc" --format netcdf --output-dir "$WORK/nc3" 2> /dev/null \
  || fail "netcdf study export (resampled) failed"
# Debian's python3, which has Debian's xarray and netCDF4 (a python3 earlier on PATH may not).
"${PEMC_PYTHON:-/usr/bin/python3}" - "$WORK/nc/gauss.nc" "$WORK/nuts.csv" "$WORK/nc2/pe_n5.nc" "$WORK/nc3/pe_n5.nc" <<'PY' || fail "xarray check failed"
import csv, sys
import numpy as np
import xarray as xr
path, csv_path, pe_path, resampled_path = sys.argv[1:5]
post = xr.open_dataset(path, group="posterior")
stats = xr.open_dataset(path, group="sample_stats")
assert dict(post["x"].sizes) == {"chain": 2, "draw": 400, "x_dim_0": 3}, post["x"].sizes
for v in ("lp", "acceptance_rate", "step_size", "tree_depth", "n_steps", "diverging", "energy"):
    assert v in stats, v
assert stats["diverging"].dtype == bool, stats["diverging"].dtype
rows = list(csv.DictReader(open(csv_path)))
chains = sorted({int(r["chain_id"]) for r in rows})
assert list(post["chain"].values) == chains
for k, c in enumerate(chains):
    mine = sorted((r for r in rows if int(r["chain_id"]) == c), key=lambda r: int(r["iteration"]))
    for i in range(3):
        want = np.array([float(r[f"x[{i + 1}]"]) for r in mine])
        assert np.array_equal(post["x"].values[k, :, i], want), (c, i)
    assert np.array_equal(stats["lp"].values[k], np.array([float(r["lp__"]) for r in mine]))
warm = xr.open_dataset(path, group="warmup_posterior")
assert dict(warm["x"].sizes) == {"chain": 2, "draw": 200, "x_dim_0": 3}, warm["x"].sizes
assert "lp" in xr.open_dataset(path, group="warmup_sample_stats")
pe = xr.open_dataset(pe_path, group="posterior")
assert dict(pe["x"].sizes) == {"chain": 2, "draw": 300, "weighted_sample": 5, "x_dim_0": 2}, pe["x"].sizes
pes = xr.open_dataset(pe_path, group="sample_stats")
w = np.exp(pes["log_weight"].values)
assert np.allclose(w.sum(axis=2), 1.0), "pseudo-extended weights normalise within each draw"
res = xr.open_dataset(resampled_path, group="posterior")
assert dict(res["x"].sizes) == {"chain": 2, "draw": 300, "x_dim_0": 2}, res["x"].sizes
assert "log_weight" not in xr.open_dataset(resampled_path, group="sample_stats")
PY
passed=$((passed + 1))

# 4. Bad input: damaged and unfinished files export what is intact, warn and exit 1; a non-empty
#    output directory needs --overwrite; an unknown format lists the valid ones.
size=$(stat -c %s "$WORK/nuts.pemc")
head -c $((size - 100)) "$WORK/nuts.pemc" > "$WORK/torn.pemc"
cp "$WORK/nuts.pemc" "$WORK/flipped.pemc"
printf '\xff' | dd of="$WORK/flipped.pemc" bs=1 seek=$((size / 2)) conv=notrunc status=none
for f in torn flipped; do
  set +e
  "$REPORT" export "$WORK/$f.pemc" > "$WORK/$f.csv" 2> "$WORK/$f.err"
  rc=$?
  set -e
  [ "$rc" -eq 1 ] || fail "export of the $f file: exit $rc, expected 1"
  grep -q "warning: .*damaged at byte" "$WORK/$f.err" || fail "export of the $f file: no warning"
  [ "$(wc -l < "$WORK/$f.csv")" -gt 100 ] || fail "export of the $f file wrote nothing"
  set +e
  "$REPORT" export "$WORK/$f.pemc" --estimates > /dev/null 2> "$WORK/$f.est.err"
  rc=$?
  set -e
  [ "$rc" -eq 1 ] && grep -q "damaged at byte" "$WORK/$f.est.err" || fail "export --estimates of the $f file: exit $rc"
done
set +e
"$REPORT" export "$WORK/nuts.pemc" --format cmdstan --output-dir "$WORK/cmdstan" 2> "$WORK/full.err"
rc_full=$?
"$REPORT" export "$WORK/nuts.pemc" --format parquet 2> "$WORK/fmt.err"
rc_fmt=$?
set -e
[ "$rc_full" -eq 1 ] && grep -q -- "--overwrite" "$WORK/full.err" || fail "non-empty --output-dir not refused"
[ "$rc_fmt" -ne 0 ] && grep -q "csv, cmdstan, netcdf" "$WORK/fmt.err" || fail "unknown format: $(cat "$WORK/fmt.err")"
"$REPORT" export "$WORK/nuts.pemc" --format cmdstan --output-dir "$WORK/cmdstan" --overwrite 2> /dev/null \
  || fail "--overwrite refused"
passed=$((passed + 1))
echo "$passed passed, 0 failed"
