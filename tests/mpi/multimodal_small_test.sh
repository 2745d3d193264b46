#!/usr/bin/env bash
# A small multimodal case at a sampler's defaults (issue 36, item 6: "a small case in the default
# suite"): parallel_tempering {} with nothing else set, on tests/data/multimodal/gmix_d3_k4 (3-D,
# four Gaussian components with weights 0.4/0.3/0.2/0.1 and unequal covariances, exact truth),
# 4 chains, exported as CmdStan CSVs and checked by ../shared/multimodal/check_multimodal.py
# (every mean and second moment within 4.5 MCSE, every mode's mass, split R-hat <= 1.05).
# In the default suite (label mpi). SAMPLER="..." runs another sampler block instead.
source "$(dirname "$0")/common.sh"
CASE="$PEMC_SOURCE_DIR/tests/data/multimodal/gmix_d3_k4"
CHECKER="${PEMC_SHARED_DIR:-$PEMC_SOURCE_DIR/../shared}/multimodal/check_multimodal.py"
export PEMC_STAN_CACHE="${PEMC_STAN_CACHE:-$PEMC_BIN/stan-cache}"
BLOCK=${SAMPLER:-'parallel_tempering {}'}
# Compile the model into the cache first (once, ~30 s), outside run_mpi's time limit.
"$PEMC_BIN/pemc-stan" build "$CASE.stan" > "$WORK/build.log" 2>&1 || fail "compiling $CASE.stan: $(tail -3 "$WORK/build.log")"
cat > "$WORK/pt.pbtxt" <<CFG
name: "gmix_d3_k4_pt"
target { stan { model_file: "$CASE.stan" data_file: "$CASE.data.json" } }
sampler { $BLOCK }
warmup: 500
iterations: 2000
seeds { values: [1, 2, 3, 4] }
output { path: "$WORK/pt.pemc" }
CFG
run_mpi 2 "$DIST" "$WORK/pt.pbtxt" > "$WORK/run.log" 2>&1 ||
  fail "pemc-dist refused or failed (exit $?): $(grep -v -e '^--' -e '^$' -e '\[info\]' "$WORK/run.log" | head -4)"
# The log says what the chains fitted, once (chain 0; the others at debug level).
if [ -z "${SAMPLER:-}" ]; then
  [ "$(grep -c 'chain 0: fitted reference: mixture over 4 modes' "$WORK/run.log")" = 1 ] &&
    [ "$(grep -c 'fitted reference' "$WORK/run.log")" = 1 ] ||
    fail "the log should say once what the reference is: $(grep 'fitted' "$WORK/run.log")"
fi
"$REPORT" export "$WORK/pt.pemc" --format cmdstan --output-dir "$WORK/csv" > /dev/null || fail "export failed"
"$CHECKER" "$CASE.truth.json" "$WORK"/csv/*.csv || fail "$BLOCK fails the checker on gmix_d3_k4"
echo "multimodal_small_test: $BLOCK passes gmix_d3_k4"
