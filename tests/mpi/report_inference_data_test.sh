#!/usr/bin/env bash
# pemc-report export --format netcdf against ArviZ's InferenceData schema (issue 38 item 2), on a
# Stan model with pointwise log-likelihoods (tests/data/stan/normal_log_lik.stan: log_lik[5] in
# generated quantities) sampled by NUTS, pseudo-extended NUTS, parallel tempering and continuous
# tempering (the last two at their defaults) under mpirun. Every file is read
# as arviz.from_netcdf reads it and checked by tests/support/check_inference_data.py (groups, dims,
# coordinates, attributes, no "sample" dim, the weighted form's weights); the values are checked
# here against pemc's CSV export and the model:
#   1. default: NUTS plain, pseudo-extended resampled (a note says so), log_lik in log_likelihood
#      and equal to normal_lpdf(y[n] | mu, sigma) at every draw; every resampled draw is one of
#      its draw's pseudo-samples of positive weight, reproducibly for a seed;
#   2. --no-resample --include-warmup: the weighted form (dim weighted_sample,
#      sample_stats/log_weight) and the warmup groups; --log-lik chooses other names;
#   3. csv --resample: plain draws, not the weighted rows (it was ignored before);
#   4. refusals: --include-warmup on a file without warmup draws, on a resampled weighted run;
#      --log-lik of no quantity; --log-lik with csv;
#   6. observed_data: the Stan data (N, y of normal_log_lik.json) in every run's file, values and
#      types as in the JSON; a run whose relative data file is resolved from the run's working
#      directory, refused once the file changed (unless --data FILE or --no-observed-data),
#      --observed choosing variables, and the refusals of its options.
# Also (issue 38): lp__ in every export is Stan's lp__ for propto: false (the default) as for
# propto: true (the header's lp offset, logged at debug), and diagnose lists the model's
# parameters before its generated quantities.
source "$(dirname "$0")/common.sh"
PY="${PEMC_PYTHON:-/usr/bin/python3}"
CHECK="$PEMC_SOURCE_DIR/tests/support/check_inference_data.py"
MODEL="$PEMC_SOURCE_DIR/tests/data/stan/normal_log_lik"
VERSION=$("$DIST" --version | awk '{ print $2 }')
export PEMC_STAN_CACHE="${PEMC_STAN_CACHE:-$PEMC_BIN/stan-cache}"
# Compile the model into the cache first (once, about a minute), outside run_mpi's time limit.
"$PEMC_BIN/pemc-stan" build "$MODEL.stan" > "$WORK/build.log" 2>&1 || fail "compiling $MODEL.stan: $(tail -3 "$WORK/build.log")"
passed=0

NUTS='nuts { step_size: 0.3 adaptation { enabled: true } }'
cat > "$WORK/study.pbtxt" <<CFG
name: "normal_log_lik"
target { stan { model_file: "$MODEL.stan" data_file: "$MODEL.json" } }
warmup: 150
iterations: 200
seeds { values: [1, 2] }
output { path: "$WORK/study.pemc" write_warmup: true }
runs { name: "nuts" sampler { $NUTS } }
runs { name: "pe" sampler { pseudo_extended { n_pseudo: 3 $NUTS } } }
runs { name: "pt" sampler { parallel_tempering { } } }
runs { name: "ct" sampler { continuous_tempering { } } }
runs {
  name: "nuts_propto"
  target { stan { model_file: "$MODEL.stan" data_file: "$MODEL.json" propto: true } }
  sampler { $NUTS }
}
CFG
cat > "$WORK/nowarm.pbtxt" <<'CFG'
name: "nowarm"
target { gaussian { mean: [0, 0] } }
sampler { nuts { step_size: 0.3 } }
warmup: 20
iterations: 20
seeds { values: [1] }
output { path: "nowarm.pemc" }
CFG
(cd "$WORK" && run_mpi 2 "$DIST" study.pbtxt --log-level debug && run_mpi 1 "$DIST" nowarm.pbtxt --log-level error) \
  > "$WORK/dist.log" 2>&1 || { cat "$WORK/dist.log" >&2; fail "pemc-dist runs failed"; }
# The constant between the full density and Stan's lp__ (RunInfo.lp_offset), logged at debug:
# -log 10 - 3.5 log 2 pi = -8.735155 for every propto: false run, 0 for propto: true.
for run in nuts pe pt ct; do
  grep -q "run '$run': lp__ offset -8\.73515482542" "$WORK/dist.log" || fail "no lp__ offset logged for run $run: $(grep -m3 'lp__ offset' "$WORK/dist.log")"
done
grep -q "run 'nuts_propto': lp__ offset 0 " "$WORK/dist.log" || fail "propto: true did not record the offset 0"
! grep -q "no lp__ offset recorded" "$WORK/dist.log" || fail "$(grep -m1 'no lp__ offset' "$WORK/dist.log")"
CONFIG=(--config "$WORK/study.pbtxt")

# 1. Default export.
"$REPORT" export "$WORK/study.pemc" --format netcdf --output-dir "$WORK/nc" "${CONFIG[@]}" 2> "$WORK/nc.err" \
  || { cat "$WORK/nc.err" >&2; fail "netcdf export failed"; }
grep -q "note: weighted runs 'pe' (pseudo_extended, 400 draws over 2 chains), 'ct' (continuous_tempering, 400 draws over 2 chains) were resampled" "$WORK/nc.err" \
  && grep -q -- "--no-resample" "$WORK/nc.err" || fail "no note on the resampling: $(cat "$WORK/nc.err")"
"$PY" "$CHECK" "$WORK/nc/nuts.nc" --form plain --log-lik log_lik --observed-data N --observed-data y --version "$VERSION" --chains 2 --draws 200 > /dev/null || fail "nuts.nc"
"$PY" "$CHECK" "$WORK/nc/pe.nc" --form resampled --log-lik log_lik --observed-data N --observed-data y --version "$VERSION" --chains 2 --draws 200 > /dev/null || fail "pe.nc"
"$PY" "$CHECK" "$WORK/nc/pt.nc" --form plain --log-lik log_lik --observed-data N --observed-data y --version "$VERSION" --chains 2 --draws 200 > /dev/null || fail "pt.nc"
"$PY" "$CHECK" "$WORK/nc/ct.nc" --form resampled --log-lik log_lik --observed-data N --observed-data y --version "$VERSION" --chains 2 --draws 200 > /dev/null || fail "ct.nc"
"$REPORT" export "$WORK/study.pemc" --output-dir "$WORK/csv" "${CONFIG[@]}" 2> /dev/null || fail "csv export failed"
"$REPORT" export "$WORK/study.pemc" --format netcdf --output-dir "$WORK/nc_again" "${CONFIG[@]}" 2> /dev/null \
  || fail "second netcdf export failed"
"$PY" - "$WORK" "$MODEL.json" <<'PY' || fail "values of the default export"
import csv, json, sys
import numpy as np
import xarray as xr
work, data = sys.argv[1:3]
y = np.array(json.load(open(data))["y"])
def normal_lpdf(y, mu, sigma):
    return -0.5 * ((y - mu) / sigma) ** 2 - np.log(sigma) - 0.5 * np.log(2 * np.pi)
def rows(run):
    return list(csv.DictReader(open(f"{work}/csv/{run}.csv")))
for run in ("nuts", "pe", "pt", "ct"):
    post = xr.open_dataset(f"{work}/nc/{run}.nc", group="posterior")
    ll = xr.open_dataset(f"{work}/nc/{run}.nc", group="log_likelihood")["log_lik"]
    assert sorted(post.data_vars) == ["mu", "sigma", "y_rep"], sorted(post.data_vars)
    assert ll.dims == ("chain", "draw", "log_lik_dim_0") and ll.shape == (2, 200, 5), (ll.dims, ll.shape)
    mu, sigma = post["mu"].values[..., None], post["sigma"].values[..., None]
    assert np.allclose(ll.values, normal_lpdf(y, mu, sigma), rtol=1e-10, atol=1e-10), run
    lp = xr.open_dataset(f"{work}/nc/{run}.nc", group="sample_stats")["lp"]
    assert lp.dims == ("chain", "draw") and np.isfinite(lp.values).all(), run
    # Stan's lp__ (section 3 below says why this is its formula).
    mu, sigma = mu[..., 0], sigma[..., 0]
    stan_lp = ll.values.sum(axis=2) - mu**2 / 200 - np.log(sigma)**2 / 2 + 2.5 * np.log(2 * np.pi)
    assert np.allclose(lp.values, stan_lp, rtol=0, atol=1e-6), (run, np.abs(lp.values - stan_lp).max())
# observed_data: the model's data as the JSON holds them, N an integer.
obs = json.load(open(data))
for run in ("nuts", "pe", "pt", "ct", "nuts_propto"):
    od = xr.open_dataset(f"{work}/nc/{run}.nc", group="observed_data")
    assert od["y"].dims == ("y_dim_0",) and np.array_equal(od["y"].values, obs["y"]), run
    assert od["y"].dtype == np.float64, od["y"].dtype
    assert od["N"].dims == () and od["N"].values == obs["N"], run
    assert np.issubdtype(od["N"].dtype, np.integer), od["N"].dtype
    assert od.attrs["pemc_data_file"] == data and "pemc_data_note" not in od.attrs, od.attrs
# NUTS: every value is the CSV export's, in order.
nuts, post = rows("nuts"), xr.open_dataset(f"{work}/nc/nuts.nc", group="posterior")
ll = xr.open_dataset(f"{work}/nc/nuts.nc", group="log_likelihood")["log_lik"].values
for k, c in enumerate(post["chain"].values):
    mine = [r for r in nuts if int(r["chain_id"]) == c]
    assert np.array_equal(post["mu"].values[k], [float(r["mu"]) for r in mine]), c
    assert np.array_equal(ll[k, :, 4], [float(r["log_lik[5]"]) for r in mine]), c
# Pseudo-extended resampled: draw i of chain k is one of draw i's pseudo-samples of positive
# weight (the CSV's rows, which keep them all), with that sample's lp.
pe, post = rows("pe"), xr.open_dataset(f"{work}/nc/pe.nc", group="posterior")
lp = xr.open_dataset(f"{work}/nc/pe.nc", group="sample_stats")["lp"].values
for k, c in enumerate(post["chain"].values):
    mine = [r for r in pe if int(r["chain_id"]) == c]
    for i in range(200):
        draw = [r for r in mine[3 * i : 3 * i + 3] if float(r["log_weight"]) > -np.inf]
        pick = [r for r in draw if float(r["mu"]) == post["mu"].values[k, i]
                and float(r["sigma"]) == post["sigma"].values[k, i]]
        assert pick, (c, i)
        assert float(pick[0]["lp__"]) == lp[k, i], (c, i)
# Reproducible: the same seed resamples the same draws.
again = xr.open_dataset(f"{work}/nc_again/pe.nc", group="posterior")
assert np.array_equal(again["mu"].values, post["mu"].values)
PY
passed=$((passed + 1))

# 2. The weighted form with warmup; other log-likelihood names.
"$REPORT" export "$WORK/study.pemc" --format netcdf --no-resample --include-warmup --output-dir "$WORK/ncw" \
  "${CONFIG[@]}" 2> "$WORK/ncw.err" || { cat "$WORK/ncw.err" >&2; fail "netcdf --no-resample failed"; }
grep -q "note: run 'pe' (pseudo_extended) is exported weighted (--no-resample).*az.summary" "$WORK/ncw.err" \
  || fail "no note that az.summary is unweighted: $(cat "$WORK/ncw.err")"
"$PY" "$CHECK" "$WORK/ncw/nuts.nc" --form plain --warmup --log-lik log_lik --observed-data N --observed-data y --version "$VERSION" > /dev/null || fail "ncw/nuts.nc"
"$PY" "$CHECK" "$WORK/ncw/pe.nc" --form weighted --warmup --log-lik log_lik --observed-data N --observed-data y --version "$VERSION" --draws 200 > /dev/null \
  || fail "ncw/pe.nc"
"$PY" "$CHECK" "$WORK/ncw/ct.nc" --form weighted --warmup --log-lik log_lik --observed-data N --observed-data y --version "$VERSION" --draws 200 > /dev/null \
  || fail "ncw/ct.nc"
"$PY" - "$WORK" <<'PY' || fail "values of the weighted form"
import csv, sys
import numpy as np
import xarray as xr
work = sys.argv[1]
post = xr.open_dataset(f"{work}/ncw/pe.nc", group="posterior")
lw = xr.open_dataset(f"{work}/ncw/pe.nc", group="sample_stats")["log_weight"].values
assert post["mu"].dims == ("chain", "draw", "weighted_sample") and post["mu"].shape == (2, 200, 3)
assert np.allclose(np.exp(lw).sum(axis=2), 1.0), "pseudo-extended weights normalise within each draw"
pe = list(csv.DictReader(open(f"{work}/csv/pe.csv")))
for k, c in enumerate(post["chain"].values):
    mine = [r for r in pe if int(r["chain_id"]) == c]
    assert np.array_equal(post["mu"].values[k].ravel(), [float(r["mu"]) for r in mine]), c
    assert np.array_equal(lw[k].ravel(), [float(r["log_weight"]) for r in mine]), c
warm = xr.open_dataset(f"{work}/ncw/pe.nc", group="warmup_posterior")
assert warm["mu"].shape == (2, 150, 3), warm["mu"].shape
PY
"$REPORT" export "$WORK/study.pemc" --format netcdf --run nuts --include-warmup --log-lik y_rep --log-lik sigma \
  --output-dir "$WORK/ncl" 2> /dev/null || fail "--log-lik export failed"
"$PY" "$CHECK" "$WORK/ncl/nuts.nc" --form plain --warmup --log-lik y_rep --log-lik sigma --observed-data N --observed-data y > /dev/null || fail "--log-lik y_rep sigma"
"$PY" -c "import sys, xarray as xr; assert 'log_lik' in xr.open_dataset(sys.argv[1], group='posterior')" \
  "$WORK/ncl/nuts.nc" || fail "log_lik not in the posterior when other names are chosen"
passed=$((passed + 1))

# 3. CmdStan CSV of every run, read by rstan: the model's quantities (log_lik among them) and
# lp__, the model's log density with the Jacobian of sigma's log transform (--config:
# pseudo-extended and continuous tempering record their extended density). lp__ is Stan's (the
# constants of `~` dropped) whether the run sampled with the default propto: false (the full
# density minus the recorded offset) or propto: true: lp__ - sum(log_lik) is exactly
# -mu^2 / 200 - (log sigma)^2 / 2 + (N / 2) log(2 pi), N = 5, at every draw of every run (with
# every constant kept it would be -mu^2 / 200 - (log sigma)^2 / 2 - log 10 - log(2 pi)).
"$REPORT" export "$WORK/study.pemc" --format cmdstan --resample --config "$WORK/study.pbtxt" \
  --output-dir "$WORK/cmdstan" 2> "$WORK/cmdstan.err" || { cat "$WORK/cmdstan.err" >&2; fail "cmdstan export failed"; }
Rscript - "$WORK/cmdstan" <<'R' || fail "rstan check of the CmdStan exports failed"
dir <- commandArgs(trailingOnly = TRUE)[1]
for (run in c("nuts", "pe", "pt", "ct", "nuts_propto")) {
  fit <- suppressMessages(rstan::read_stan_csv(sort(Sys.glob(file.path(dir, paste0(run, "_[0-9]*.csv"))))))
  pars <- dimnames(as.array(fit))[[3]]
  want <- c("mu", "sigma", "y_rep", paste0("log_lik[", 1:5, "]"), "lp__")
  if (!identical(pars, want)) stop(run, ": parameters ", paste(pars, collapse = ","))
  d <- as.data.frame(fit)
  if (nrow(d) != 400) stop(run, ": ", nrow(d), " draws, not 400")
  ll <- rowSums(d[, paste0("log_lik[", 1:5, "]")])
  constant <- 2.5 * log(2 * pi)
  gap <- d$lp__ - ll + d$mu^2 / 200 + log(d$sigma)^2 / 2 - constant
  if (!all(is.finite(gap)) || max(abs(gap)) > 1e-6)
    stop(run, ": lp__ is not the model's log density (largest gap ", max(abs(gap)), ")")
}
R
passed=$((passed + 1))

# 3b. diagnose lists the model's parameters (mu, sigma: RunInfo.n_parameter_outputs = 2) before
# its generated quantities (y_rep, log_lik[1..5]), each group worst first; JSON says how many.
diag=$("$REPORT" diagnose "$WORK/study.pemc" --coords 8 2> /dev/null || true)
awk '/^run nuts /{on=1; next} /^run /{on=0} on && /^  (mu|sigma|y_rep|log_lik\[)/ { print $1 }' <<< "$diag" \
  > "$WORK/diag_order.txt"
[ "$(head -2 "$WORK/diag_order.txt" | sort | tr '\n' ' ')" = "mu sigma " ] \
  && [ "$(wc -l < "$WORK/diag_order.txt")" -eq 8 ] \
  || { echo "$diag" >&2; fail "diagnose: parameters not listed first: $(tr '\n' ' ' < "$WORK/diag_order.txt")"; }
"$REPORT" diagnose "$WORK/study.pemc" --format json 2> /dev/null | "$PY" -c '
import json, sys
runs = {r["run_id"]: r for r in json.load(sys.stdin)["runs"]}
assert all(runs[r]["n_model_parameters"] == 2 for r in ("nuts", "pe", "pt", "ct", "nuts_propto")), runs.keys()
' || fail "diagnose --format json: n_model_parameters"
passed=$((passed + 1))

# 4. csv --resample: one plain row per draw, without sample and log_weight.
"$REPORT" export "$WORK/study.pemc" --run pe --resample --seed 5 > "$WORK/pe_resampled.csv" 2> /dev/null \
  || fail "csv --resample failed"
head -1 "$WORK/pe_resampled.csv" | grep -q 'sample\|log_weight' && fail "csv --resample has weights: $(head -1 "$WORK/pe_resampled.csv")"
[ "$(tail -n +2 "$WORK/pe_resampled.csv" | wc -l)" -eq 400 ] || fail "csv --resample: not one row per draw"
passed=$((passed + 1))

# 5. Refusals: a clear message and a non-zero exit, nothing written.
refused() {  # refused NAME PATTERN pemc-report-args...
  local name=$1 pattern=$2 rc=0; shift 2
  "$REPORT" "$@" > "$WORK/$name.out" 2> "$WORK/$name.err" || rc=$?
  [ "$rc" -ne 0 ] || fail "$name: exit 0"
  grep -q -- "$pattern" "$WORK/$name.err" || fail "$name: $(cat "$WORK/$name.err")"
}
refused no-warmup "export --include-warmup: .*nowarm.pemc holds no warmup draws: .*write_warmup: true" \
  export "$WORK/nowarm.pemc" --format netcdf --include-warmup --output-dir "$WORK/x1"
[ ! -e "$WORK/x1" ] || fail "no-warmup: wrote $WORK/x1"
refused no-warmup-csv "nowarm.pemc holds no warmup draws" export "$WORK/nowarm.pemc" --include-warmup
refused resampled-warmup "run 'pe' (pseudo_extended) is weighted.*--no-resample" \
  export "$WORK/study.pemc" --format netcdf --include-warmup --output-dir "$WORK/x2"
refused log-lik-none "export --log-lik 'll': no exported run has quantities of that base name" \
  export "$WORK/study.pemc" --format netcdf --log-lik ll --output-dir "$WORK/x3"
refused log-lik-csv "only --format netcdf has a log_likelihood group" export "$WORK/study.pemc" --log-lik log_lik
refused both "excludes" export "$WORK/study.pemc" --resample --no-resample
passed=$((passed + 1))

# 6. observed_data of a run whose data file is relative to its working directory (run/), exported
# from elsewhere; then the data file changes: refused, naming the run and the file, unless the
# user gives the data (--data) or leaves the group out (--no-observed-data).
mkdir -p "$WORK/run"
cp "$MODEL.json" "$WORK/run/data.json"
cat > "$WORK/run/rel.pbtxt" <<CFG
name: "rel"
target { stan { model_file: "$MODEL.stan" data_file: "data.json" } }
sampler { $NUTS }
warmup: 50
iterations: 50
seeds { values: [1] }
output { path: "rel.pemc" }
CFG
(cd "$WORK/run" && run_mpi 1 "$DIST" rel.pbtxt --log-level error) > "$WORK/rel.log" 2>&1 \
  || { cat "$WORK/rel.log" >&2; fail "pemc-dist rel.pbtxt failed"; }
REL="$WORK/run/rel.pemc"
"$REPORT" export "$REL" --format netcdf --output-dir "$WORK/od1" 2> "$WORK/od1.err" \
  || { cat "$WORK/od1.err" >&2; fail "export of the relative data file failed"; }
"$PY" "$CHECK" "$WORK/od1/rel.nc" --form plain --log-lik log_lik --observed-data N --observed-data y \
  --version "$VERSION" > /dev/null || fail "od1/rel.nc"
"$REPORT" export "$REL" --format netcdf --observed y --output-dir "$WORK/od2" 2> /dev/null \
  || fail "export --observed y failed"
"$PY" "$CHECK" "$WORK/od2/rel.nc" --form plain --log-lik log_lik --observed-data y > /dev/null \
  || fail "--observed y: not only y"
"$REPORT" export "$REL" --format netcdf --observed N,y --output-dir "$WORK/od3" 2> /dev/null \
  || fail "export --observed N,y failed"
"$PY" "$CHECK" "$WORK/od3/rel.nc" --form plain --log-lik log_lik --observed-data N --observed-data y \
  > /dev/null || fail "--observed N,y"
cp "$WORK/run/data.json" "$WORK/original.json"
"$PY" - "$WORK/run/data.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["y"][0] = 9.5
json.dump(d, open(sys.argv[1], "w"))
PY
refused od-changed "run 'rel': target.stan.data_file $WORK/run/data.json changed since the run (sha256 [0-9a-f]\{16\}\.\.\. recorded, [0-9a-f]\{16\}\.\.\. now); pass --data FILE with the run's data or --no-observed-data" \
  export "$REL" --format netcdf --output-dir "$WORK/od4"
[ ! -e "$WORK/od4" ] || fail "od-changed: wrote $WORK/od4"
"$REPORT" export "$REL" --format netcdf --data "$WORK/original.json" --output-dir "$WORK/od5" 2> "$WORK/od5.err" \
  || { cat "$WORK/od5.err" >&2; fail "export --data original failed"; }
! grep -q "observed_data is from --data" "$WORK/od5.err" || fail "a note for --data with the run's own data"
"$REPORT" export "$REL" --format netcdf --data "$WORK/run/data.json" --output-dir "$WORK/od6" 2> "$WORK/od6.err" \
  || { cat "$WORK/od6.err" >&2; fail "export --data changed failed"; }
grep -q "note: run 'rel': observed_data is from --data $WORK/run/data.json, whose content is not the run's target.stan.data_file data.json" "$WORK/od6.err" \
  || fail "no note that --data differs from the run's data: $(cat "$WORK/od6.err")"
"$REPORT" export "$REL" --format netcdf --no-observed-data --output-dir "$WORK/od7" 2> /dev/null \
  || fail "export --no-observed-data failed"
"$PY" "$CHECK" "$WORK/od7/rel.nc" --form plain --log-lik log_lik > /dev/null || fail "--no-observed-data wrote observed_data"
# A file of a pemc-dist before the header recorded the data's hash (fields 16, 17 dropped): no
# observed_data, a note, exit 0; --data still exports the data, noting it cannot be compared.
"$PY" "$PEMC_SOURCE_DIR/tests/support/drop_header_fields.py" "$REL" "$WORK/old.pemc" 16 17 || fail "drop_header_fields.py"
"$REPORT" verify "$WORK/old.pemc" > /dev/null 2>&1 || fail "old.pemc is no valid record file"
"$REPORT" export "$WORK/old.pemc" --format netcdf --output-dir "$WORK/od_old" 2> "$WORK/od_old.err" \
  || { cat "$WORK/od_old.err" >&2; fail "export of a file without data hashes failed"; }
grep -q "note: observed_data omitted: the file does not record its data files' hashes" "$WORK/od_old.err" \
  || fail "no note on the omitted observed_data: $(cat "$WORK/od_old.err")"
"$PY" "$CHECK" "$WORK/od_old/rel.nc" --form plain --log-lik log_lik > /dev/null || fail "od_old: observed_data written"
"$REPORT" export "$WORK/old.pemc" --format netcdf --data "$WORK/original.json" --output-dir "$WORK/od_old2" 2> "$WORK/od_old2.err" \
  || { cat "$WORK/od_old2.err" >&2; fail "export --data of a file without data hashes failed"; }
grep -q "observed_data is from --data $WORK/original.json, which cannot be compared" "$WORK/od_old2.err" \
  || fail "no note that --data cannot be compared: $(cat "$WORK/od_old2.err")"
"$PY" - "$WORK" <<'PY' || fail "values of --data"
import sys
import numpy as np
import xarray as xr
work = sys.argv[1]
ours = xr.open_dataset(f"{work}/od5/rel.nc", group="observed_data")
assert ours["y"].values[0] == 0.5 and "pemc_data_note" not in ours.attrs, ours.attrs
theirs = xr.open_dataset(f"{work}/od6/rel.nc", group="observed_data")
assert theirs["y"].values[0] == 9.5, theirs["y"].values
assert "whose content is not the run's" in theirs.attrs["pemc_data_note"], theirs.attrs
old = xr.open_dataset(f"{work}/od_old2/rel.nc", group="observed_data")
assert old["y"].values[0] == 0.5 and "cannot be compared" in old.attrs["pemc_data_note"], old.attrs
PY
refused od-observed-none "export --observed 'z': no exported run's data has a variable of that name (run 'rel': N, y)" \
  export "$REL" --format netcdf --data "$WORK/original.json" --observed z --output-dir "$WORK/od8"
refused od-csv "export --data: only --format netcdf has an observed_data group (got --format csv)" \
  export "$REL" --data "$WORK/original.json"
refused od-no-data "export --observed: no exported run is a Stan model with a data file" \
  export "$WORK/nowarm.pemc" --format netcdf --observed y --output-dir "$WORK/od9"
refused od-both "excludes" export "$REL" --format netcdf --data "$WORK/original.json" --no-observed-data --output-dir "$WORK/od10"
passed=$((passed + 1))
echo "$passed passed, 0 failed"
