#!/usr/bin/env bash
# Numerical faults inside a target (NaN, +inf, overflow in exp, a NaN gradient) and absurd step sizes
# become rejected proposals, counted in the footer (n_rejected_nonfinite, n_divergent): never a crash,
# a failed chain or a NaN estimate.
source "$(dirname "$0")/common.sh"
passed=0
cd "$WORK"

# footer_field FILE FIELD -> that field of every chain summary in the file's footer, one per line.
# Decodes the last frame (the footer) with protoc against the schema in proto/.
footer_field() {
  python3 - "$1" > footer.bin <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
pos, last = 8, None
while pos + 8 <= len(data):
    n = struct.unpack_from("<I", data, pos)[0]
    if pos + 8 + n > len(data): break
    last = data[pos + 8:pos + 8 + n]
    pos += 8 + n
sys.stdout.buffer.write(last or b"")
PY
  protoc --decode=pemc.v1.Record --proto_path="$PEMC_SOURCE_DIR/proto" pemc/v1/records.proto < footer.bin |
    grep -E "^ +$2: " | awk '{print $2}' || true
}

# check_run NAME FILE: exit status and file checked by the caller; every chain ok, estimates finite.
check_run() {
  local name=$1 file=$2 json
  "$REPORT" verify "$file" | grep -c >/dev/null ": OK (" || fail "$name: verify did not say OK"
  json=$("$REPORT" summarize "$file" --format json)
  grep -q <<< "$json" '"status": "ok"' || fail "$name: no chain with status ok"
  if grep -q <<< "$json" '"status": "failed'; then fail "$name: a chain failed"; fi
  # nlohmann::json writes NaN and inf as null.
  if echo "$json" | python3 -c '
import json, math, sys
s = json.load(sys.stdin)
bad = [r["chain_id"] for r in s["runs"] for v in r["mean"] + r["second_moment"]
       if v is None or not math.isfinite(v)]
sys.exit(1 if bad else 0)'; then :; else fail "$name: a non-finite estimate in the summary"; fi
}

# 1. Neal's funnel with a step size far too large, fixed (no adaptation): HMC and NUTS.
for sampler in "hmc { step_size: 5.0 n_leapfrog: 20 }" "nuts { step_size: 5.0 }"; do
  kind=${sampler%% *}
  cat > funnel_$kind.pbtxt <<PB
target { funnel { dim: 10 } }
sampler { $sampler }
iterations: 2000
seeds { values: [1, 2, 3] }
output { path: "funnel_$kind.pemc" }
PB
  run_mpi 2 "$DIST" funnel_$kind.pbtxt --log-level warn > funnel_$kind.log 2>&1 ||
    { cat funnel_$kind.log; fail "funnel/$kind: pemc-dist failed"; }
  check_run "funnel/$kind" funnel_$kind.pemc
  div=$(footer_field funnel_$kind.pemc n_divergent | awk '{s += $1} END {print s + 0}')
  [ "${div:-0}" -gt 0 ] || fail "funnel/$kind: no divergent transitions counted (step 5 on the funnel)"
  echo "funnel/$kind: exit 0, all chains ok, n_divergent per chain: $(footer_field funnel_$kind.pemc n_divergent | tr '\n' ' ')"
  passed=$((passed + 1))
done

# 2. A user model that returns NaN, +inf, an overflowing exp and a NaN gradient in parts of the plane.
cat > faulty.c <<'C'
#include <math.h>
#include <stdlib.h>
#include "plugin_abi.h"
typedef struct { int dim; } Model;
int pemc_plugin_abi_version(void) { return 1; }
void* pemc_model_create(const char* a, char* e, size_t n) { Model* m = malloc(sizeof *m); m->dim = 2; return m; }
void pemc_model_destroy(void* m) { free(m); }
int pemc_model_dim(const void* m) { return ((const Model*)m)->dim; }
double pemc_model_potential_gradient(void* m, const double* x, double* g) {
  const double r2 = x[0] * x[0] + x[1] * x[1];
  g[0] = x[0];
  g[1] = x[1];
  if (x[0] > 2.0) return NAN;                 /* NaN potential */
  if (x[0] < -2.0) return INFINITY;           /* outside the support */
  if (x[1] < -2.0) return exp(1000.0 * r2);   /* overflows to +inf */
  if (x[1] > 2.0) { g[1] = NAN; return 0.5 * r2; }  /* finite potential, NaN gradient */
  return 0.5 * r2;
}
C
${CC:-cc} -O1 -shared -fPIC -I"$PEMC_SOURCE_DIR/src/targets" -o libfaulty.so faulty.c -lm ||
  fail "cannot compile the test plugin"
for sampler in "hmc { step_size: 0.9 n_leapfrog: 8 }" "nuts { step_size: 0.9 }"; do
  kind=${sampler%% *}
  cat > faulty_$kind.pbtxt <<PB
target { plugin { library: "./libfaulty.so" } }
sampler { $sampler }
iterations: 3000
seeds { values: [1, 2] }
init { uniform_radius: 1.0 }
output { path: "faulty_$kind.pemc" }
PB
  run_mpi 2 "$DIST" faulty_$kind.pbtxt --log-level warn > faulty_$kind.log 2>&1 ||
    { cat faulty_$kind.log; fail "plugin/$kind: pemc-dist failed"; }
  check_run "plugin/$kind" faulty_$kind.pemc
  nonfinite=$(footer_field faulty_$kind.pemc n_rejected_nonfinite | awk '{s += $1} END {print s + 0}')
  [ "${nonfinite:-0}" -gt 0 ] || fail "plugin/$kind: no rejections of non-finite proposals counted"
  echo "plugin/$kind: exit 0, all chains ok, n_rejected_nonfinite per chain:" \
       "$(footer_field faulty_$kind.pemc n_rejected_nonfinite | tr '\n' ' ')," \
       "n_divergent: $(footer_field faulty_$kind.pemc n_divergent | tr '\n' ' ')"
  passed=$((passed + 1))
done

echo "$passed passed, 0 failed"
