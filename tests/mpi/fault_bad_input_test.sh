#!/usr/bin/env bash
# Absurd sizes and damaged files are refused with an error before anything large is allocated:
# every pemc-dist case runs `--validate` under a 4 GB address-space limit (ulimit -v; see
# limit_memory), so an attempt to allocate what the input asks for shows up as a crash instead of
# a message; pemc-report reads damaged record files under 200 MB. Each case: exit status and the
# message (docs/bad-inputs.md).
source "$(dirname "$0")/common.sh"
cd "$WORK"
passed=0
skipped=0

HMC='sampler { hmc { step_size: 0.1 n_leapfrog: 5 } }'
REST='iterations: 10
seeds { values: [1] }
output { path: "out.pemc" }'
PLUGIN="$PEMC_BIN/libpemc_example_plugin.so"

# limit_memory KB: the address-space limit of the cases' subshells. Under AddressSanitizer
# (PEMC_SANITIZED=1, deploy/sanitize.sh), whose shadow memory needs terabytes of address space,
# ulimit -v cannot be used: ASan's own cap on a single allocation stands in for it, failing like
# the limit does (operator new throws std::bad_alloc) rather than aborting.
limit_memory() {
  if [ "${PEMC_SANITIZED:-0}" = 1 ]; then
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}max_allocation_size_mb=$(($1 / 1024)):allocator_may_return_null=1"
  else
    ulimit -v "$1"
  fi
}

# refused NAME EXIT PATTERN CONFIG_BODY [pemc-dist options...]: writes NAME.pbtxt (body + REST)
# unless the body is "-" (NAME.pbtxt exists), runs pemc-dist --validate, expects EXIT and PATTERN.
refused() {
  local name=$1 want=$2 pattern=$3 body=$4 rc
  shift 4
  [ "$body" = "-" ] || printf '%s\n%s\n' "$body" "$REST" > "$name.pbtxt"
  set +e
  (limit_memory 4000000; timeout 60 "$DIST" "$name.pbtxt" --validate "$@") > "$name.log" 2>&1
  rc=$?
  set -e
  [ "$rc" -eq "$want" ] || { cat "$name.log"; fail "$name: expected exit $want, got $rc"; }
  grep -qE -- "$pattern" "$name.log" || { cat "$name.log"; fail "$name: no message matching '$pattern'"; }
  echo "$name: exit $rc: $(grep -m1 -E -- "$pattern" "$name.log" | sed 's/^ *//')"
  passed=$((passed + 1))
}

# ---- dimensions ---------------------------------------------------------------------------------
refused dim-1e12-text 2 "target.funnel.dim: Integer out of range \(1000000000000\)" \
  "target { funnel { dim: 1000000000000 } } $HMC"
refused dim-1e12-set 2 "target.funnel.dim: value '1000000000000' is out of range for a signed 32-bit integer" \
  "target { funnel { dim: 10 } } $HMC" --set target.funnel.dim=1000000000000
refused dim-2e9 2 "target.funnel.dim: must be in \[2, 10000000\] \(got 2000000000\)" \
  "target { funnel { dim: 2000000000 } } $HMC"
refused dim-2e9-correlated 2 "target.correlated_gaussian.dim: must be in \[1, 10000000\]" \
  "target { correlated_gaussian { dim: 2000000000 } } $HMC"
refused dense-metric-1e7 2 "sampler.hmc.metric: needs 4 dense 10000000 x 10000000 matrices" \
  "target { funnel { dim: 10000000 } } sampler { hmc { step_size: 0.1 n_leapfrog: 5 metric: DENSE } }"
refused boltzmann-units-1e6 2 "target.boltzmann.generated.n_units: must be in \[2, 64\]" \
  "target { boltzmann { generated { seed: 1 n_units: 1000000 } } } $HMC"
if [ -f "$PLUGIN" ]; then
  refused plugin-dim-1e12 2 "bad dim value '1000000000000'" \
    "target { plugin { library: \"$PLUGIN\" argument: \"dim=1000000000000\" } } $HMC"
  refused plugin-dim-2e9 2 "pemc_model_dim returned 2000000000, expected a dimension in \[1, 10000000\]" \
    "target { plugin { library: \"$PLUGIN\" argument: \"dim=2000000000\" } } $HMC"
  # The dimension is the plugin's, so only building the sampler finds the dense metric too large.
  refused plugin-dense-1e7 2 "building the hmc sampler for the plugin target of dimension 10000000 needs more memory" \
    "target { plugin { library: \"$PLUGIN\" argument: \"dim=10000000\" } } sampler { hmc { step_size: 0.1 n_leapfrog: 5 metric: DENSE } }"
else
  echo "plugin cases: SKIPPED (no $PLUGIN)"; skipped=$((skipped + 1))
fi

# ---- pseudo-samples (if this build has the pseudo-extended sampler) -----------------------------
PE="sampler { pseudo_extended { n_pseudo: 2 hmc { step_size: 0.1 n_leapfrog: 5 } } }"
printf '%s\n%s\n' "target { funnel { dim: 10 } } $PE" "$REST" > pe-ok.pbtxt
if "$DIST" pe-ok.pbtxt --validate > pe-ok.log 2>&1; then
  refused pseudo-samples-1e9 2 "sampler.pseudo_extended.n_pseudo: .*\[1, 1000000\] \(got 1000000000\)" \
    "target { funnel { dim: 10 } } ${PE/n_pseudo: 2/n_pseudo: 1000000000}"
  refused pseudo-dim-1e13 2 "building the pseudo_extended sampler for the funnel target of dimension 10000000 needs more memory" \
    "target { funnel { dim: 10000000 } } ${PE/n_pseudo: 2/n_pseudo: 1000000}"
else
  echo "pseudo-sample cases: SKIPPED (this pemc-dist has no pseudo_extended sampler)"; skipped=$((skipped + 1))
fi

# ---- counts -------------------------------------------------------------------------------------
printf '%s\n' "target { funnel { dim: 10 } } $HMC" "iterations: 10" "seeds { base: 1 count: 1000000000 }" \
  'output { path: "out.pemc" }' > seeds-1e9.pbtxt
refused seeds-1e9 2 "seeds.count: more seeds than the limit 10000000" -
refused chains-per-seed-1e9 2 "chains_per_seed: must be in \[1, 100000\]" \
  "target { funnel { dim: 10 } } $HMC" --set chains_per_seed=1000000000
refused iterations-int64-max 2 "iterations: more than the limit 1000000000000" \
  "target { funnel { dim: 10 } } $HMC" --iterations 9223372036854775807
refused warmup-overflow 2 "warmup: warmup \+ iterations is more than the limit 1000000000000" \
  "target { funnel { dim: 10 } } $HMC" --iterations 1000000000000 --warmup 9000000000000000000
refused n-leapfrog-2e9 2 "sampler.hmc.n_leapfrog: must be in \[1, 100000\]" \
  "target { funnel { dim: 10 } } sampler { hmc { step_size: 0.1 n_leapfrog: 2000000000 } }"
refused tree-depth-62 2 "sampler.nuts.max_tree_depth: must be in \[1, 30\]" \
  "target { funnel { dim: 10 } } sampler { nuts { step_size: 0.1 max_tree_depth: 62 } }"

# ---- 5 GB files (sparse: no disk space used) ----------------------------------------------------
truncate -s 5G big.csv big.txt config-5GB.pbtxt
refused csv-5GB 2 "big.csv: file is 5368709120 bytes, more than the limit of 2147483648 bytes" \
  "target { horseshoe_logistic { data_file: \"big.csv\" p0: 3 } } $HMC"
refused boltzmann-weights-5GB 2 "target.boltzmann.weights_file: file is 5368709120 bytes, more than the limit of 67108864 bytes" \
  "target { boltzmann { weights_file: \"big.txt\" bias_file: \"big.txt\" } } $HMC"
refused config-5GB 2 "config 'config-5GB.pbtxt' is 5368709120 bytes; configs larger than 268435456 bytes are refused" -

# ---- damaged record files, read by pemc-report under 200 MB -------------------------------------
# verify_damaged NAME FILE PATTERN: exit 1, the message, no crash.
verify_damaged() {
  local name=$1 file=$2 pattern=$3 rc
  set +e
  (limit_memory 200000; timeout 60 "$REPORT" verify "$file") > "$name.log" 2>&1
  rc=$?
  set -e
  [ "$rc" -eq 1 ] || { cat "$name.log"; fail "$name: expected exit 1, got $rc"; }
  grep -qE -- "$pattern" "$name.log" || { cat "$name.log"; fail "$name: no message matching '$pattern'"; }
  echo "$name: exit 1: $(head -c 300 "$name.log")"
  passed=$((passed + 1))
}
{ printf 'PEMCREC1'; } > big.pemc && truncate -s 5G big.pemc
verify_damaged record-5GB-zeros big.pemc "DAMAGED at byte 8 \(record 0\): zero-length frame"
# A 2 MB file whose first frame claims 256 MiB: reported without a 256 MiB buffer.
{ printf 'PEMCREC1\377\377\377\017\000\000\000\000'; head -c 2000000 /dev/zero; } > long-frame.pemc
verify_damaged record-length-256MiB long-frame.pemc "torn frame: header says 268435455 bytes but only 2000000 remain"
# A good file with a zero-filled tail (what a crash can leave): damage at the old end of file.
run_mpi 2 "$DIST" "$PEMC_SOURCE_DIR/configs/quickstart.pbtxt" --iterations 50 --warmup 10 --output good.pemc \
  --log-level warn
size=$(stat -c %s good.pemc)
cp good.pemc zero-tail.pemc && truncate -s $((size + 4096)) zero-tail.pemc
verify_damaged record-zero-tail zero-tail.pemc "DAMAGED at byte $size \(record [0-9]+\): zero-length frame"

echo "$passed passed, 0 failed ($skipped groups skipped)"
