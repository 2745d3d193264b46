#!/usr/bin/env bash
# Pooled warmup (adaptation.pooled; src/warmup/): the chains of a run warm up in rounds and share
# one metric and one sampling step size.
#  1. A badly scaled 8-D Gaussian (standard deviations 0.01 .. 100), 4 chains: the records (warmup
#     draws included) and summaries are bit-identical on 1 and 3 ranks; warmup ends early (every
#     chain converged, far below the configured 1000 iterations); every chain samples at the same
#     pooled step size; the footer counts the warmup rounds' gradients; the written warmup draws
#     are numbered on across rounds; the means and variances match the truth within their Monte
#     Carlo errors.
#  2. Chains that cannot agree (two modes of different widths, chains started on both sides) end
#     warmup at the configured maximum and say so: a warning in the log, the footer and
#     `summarize`.
#  3. No written warmup draw is lost when a chain's rounds run on different workers.
#  4. Bad configs are refused with the field named: pooled on a composite sampler's kernel or on
#     RWM, with too short a warmup, with a UNIT metric, on pseudo-extended's tempered instrumental.
#  5. Pseudo-extended on the reference path: its kernel warms up on the target, then its terminal
#     buffer on the extended space; bit-identical records on 1 and 3 ranks, warmup ends early, every
#     chain samples at one step size, and the weighted means and variances match the truth.
source "$(dirname "$0")/common.sh"
TOOL=(python3 "$PEMC_SOURCE_DIR/tests/support/record_tool.py")

footer_text() {  # FILE: the footer record in protobuf text format
  local last
  last=$("${TOOL[@]}" kinds "$1" | awk '$2 == "footer" { print $1 }')
  [ -n "$last" ] || fail "$1: no footer"
  "${TOOL[@]}" decode "$1" "$last"
}
# Python: the footer's chain summaries as dicts (scalars, plus the estimates map's entries).
CHAINS_PY='
def footer_chains(path):
    chains, cur, depth, key = [], None, 0, None
    for line in open(path):
        t = line.strip()
        if t.endswith("{"):
            depth += 1
            if depth == 2 and t.startswith("chains"):
                cur = {}
                chains.append(cur)
            continue
        if t == "}":
            depth -= 1
            continue
        name, _, value = t.partition(": ")
        value = value.strip(chr(34))
        if cur is None:
            continue
        if depth == 2:
            cur[name] = value
        elif depth == 3 and name == "key":
            key = value
        elif depth == 3 and name == "value" and key is not None:
            cur[key] = value
            key = None
    # proto3 text leaves out zero values (chain_id 0, a converged flag of 0): they read as "0".
    return [dict(c, **{k: c.get(k, "0") for k in ("chain_id", "pooled_warmup_converged")})
            for c in chains]
'

sds=(0.01 0.1 0.5 1 2 10 50 100)
variances=$(printf '%s\n' "${sds[@]}" | awk '{ printf "%s%.10g", (NR > 1 ? ", " : ""), $1 * $1 }')
cat > "$WORK/scaled.pbtxt" <<CFG
name: "pooled"
target { gaussian { mean: [1, 2, 3, 4, 5, 6, 7, 8] variance: [$variances] } }
sampler { nuts { adaptation { pooled: true } } }
warmup: 1000
iterations: 1000
seeds { base: 11 count: 4 }
output { path: "out.pemc" write_warmup: true }
CFG

for n in 1 3; do
  run_mpi "$n" "$DIST" "$WORK/scaled.pbtxt" --output "$WORK/n$n.pemc" > "$WORK/log$n.txt" 2>&1 \
    || { cat "$WORK/log$n.txt"; fail "-n $n: run failed"; }
  "$REPORT" verify "$WORK/n$n.pemc" > /dev/null || fail "-n $n: file does not verify"
  "$REPORT" export "$WORK/n$n.pemc" --include-warmup > "$WORK/raw$n.csv"
  sort "$WORK/raw$n.csv" > "$WORK/n$n.csv"
  "$REPORT" summarize "$WORK/n$n.pemc" --format json \
    | grep -v -e wall_seconds -e cpu_seconds -e '"file"' -e '"path"' > "$WORK/s$n.json"
done
cmp -s "$WORK/n1.csv" "$WORK/n3.csv" || fail "-n 1 and -n 3 draws differ"
cmp -s "$WORK/s1.json" "$WORK/s3.json" || fail "-n 1 and -n 3 summaries differ"
grep -q "pooled warmup round .* done by 4 of 4 chains" "$WORK/log1.txt" \
  || { cat "$WORK/log1.txt"; fail "no pooled warmup round in the log"; }
grep -q "warmup ends after" "$WORK/log1.txt" || fail "the log does not say when warmup ended"

footer_text "$WORK/n1.pemc" > "$WORK/footer1.txt"
"$REPORT" summarize "$WORK/n1.pemc" --format json > "$WORK/summary1.json"
python3 - "$WORK/footer1.txt" "$WORK/raw1.csv" "$WORK/summary1.json" "${sds[@]}" <<PY || fail "pooled warmup results"
$CHAINS_PY
import csv, json, math, sys
chains = footer_chains(sys.argv[1])
draws = list(csv.DictReader(open(sys.argv[2])))
quantities = {q["name"]: q for q in json.load(open(sys.argv[3]))["posterior"][0]["quantities"]}
sds = [float(s) for s in sys.argv[4:]]
assert len(chains) == 4, chains
steps = {c["final_step_size"] for c in chains}
assert len(steps) == 1, f"chains sample at different step sizes: {steps}"
is_warmup = lambda d: d["warmup"] in ("1", "true", "True")
for c in chains:
    assert c["status"] == "ok", c
    used = int(float(c["pooled_warmup_iterations"]))
    assert float(c["pooled_warmup_converged"]) == 1, c
    assert 200 <= used < 1000, f"chain {c['chain_id']}: warmup {used}"
    assert 0 < int(c["n_gradient_evals_warmup"]) < int(c["n_gradient_evals"]), c
    print(f"chain {c['chain_id']}: warmup {used} iterations, {c['n_gradient_evals_warmup']} of "
          f"{c['n_gradient_evals']} gradients in warmup, step size {c['final_step_size']}")
    # The warmup draws: iterations 0 .. used - 1, each once; then the 1000 draws.
    mine = [d for d in draws if d["chain_id"] == c["chain_id"]]
    w = sorted(int(d["iteration"]) for d in mine if is_warmup(d))
    assert w == list(range(used)), (c["chain_id"], w[:5], len(w))
    assert sum(1 for d in mine if not is_warmup(d)) == 1000
# Means and variances against the truth, in Monte Carlo standard errors: the mean's is summarize's
# MCSE (posterior's mcse_mean); the variance, the mean of (x - truth)^2, gets batch means' (each
# chain's draws in iteration order, in batches of 100: 40 batches).
rows = [d for d in draws if not is_warmup(d)]
n = len(rows)
batch = 100
worst = 0.0
for i, sd in enumerate(sds):
    name = f"x[{i + 1}]"
    x = [float(d[name]) for d in rows]
    mean = sum(x) / n
    z_mean = (mean - (i + 1)) / quantities[name]["mcse_mean"]
    means = []
    for c in chains:
        mine = sorted((int(d["iteration"]), float(d[name])) for d in rows
                      if d["chain_id"] == c["chain_id"])
        y = [(v - (i + 1)) ** 2 for _, v in mine]
        means += [sum(y[k:k + batch]) / batch for k in range(0, len(y) - batch + 1, batch)]
    var = sum(means) / len(means)
    se = math.sqrt(sum((m - var) ** 2 for m in means) / (len(means) - 1) / len(means))
    z_var = (var - sd * sd) / se
    worst = max(worst, abs(z_mean), abs(z_var))
    print(f"x{i}: mean {mean:.6g} (truth {i + 1}, z {z_mean:+.2f}), var {var:.6g} "
          f"(truth {sd * sd:.6g}, z {z_var:+.2f})")
assert worst < 4.5, f"max |z| {worst:.2f}"
PY

# 2. Modes of different widths, 1-D: starts in (-60, -15) fall to the narrow one, the others to
# the wide one, so the chains' log densities disagree whatever the warmup.
cat > "$WORK/apart.pbtxt" <<'CFG'
name: "apart"
target { mixture { components { weight: 0.5 mean: [-30] variance: 1 }
                   components { weight: 0.5 mean: [30] variance: 9 } } }
sampler { nuts { adaptation { pooled: true } } }
warmup: 300
iterations: 200
seeds { base: 1 count: 8 }
init { uniform_radius: 60 }
modes { enabled: false }
output { path: "out.pemc" }
CFG
run_mpi 2 "$DIST" "$WORK/apart.pbtxt" --output "$WORK/apart.pemc" > "$WORK/apart.log" 2>&1 \
  || { cat "$WORK/apart.log"; fail "apart: run failed"; }
footer_text "$WORK/apart.pemc" > "$WORK/apart_footer.txt"
"$REPORT" export "$WORK/apart.pemc" > "$WORK/apart.csv"
python3 - "$WORK/apart.csv" "$WORK/apart_footer.txt" <<PY || fail "apart: expected both modes visited and no convergence"
$CHAINS_PY
import csv, sys
draws = list(csv.DictReader(open(sys.argv[1])))
chains = footer_chains(sys.argv[2])
side = {}
for d in draws:
    side.setdefault(d["chain_id"], set()).add(float(d["x[1]"]) < 0)
narrow = sum(1 for s in side.values() if s == {True})
wide = sum(1 for s in side.values() if s == {False})
print(f"chains in the narrow mode: {narrow}, in the wide one: {wide}")
assert narrow > 0 and wide > 0, "the premise failed: every chain went to one mode"
# Chains that did not agree sample at their own step sizes (one would not suit both modes).
assert len({c["final_step_size"] for c in chains}) > 1, chains
for c in chains:
    assert float(c["pooled_warmup_converged"]) == 0, c
    # 75 + 25 + 3 x 50 + 50: no fourth 50-iteration window fits before the terminal buffer.
    assert int(float(c["pooled_warmup_iterations"])) == 300, c
PY
grep -q "did not agree before the maximum warmup" "$WORK/apart.log" \
  || { cat "$WORK/apart.log"; fail "apart: no warning in the log"; }
"$REPORT" summarize "$WORK/apart.pemc" 2>&1 | grep -q "pooled warmup ended at the configured maximum" \
  || fail "apart: summarize does not show the warning"

# 3. No written warmup draw is lost when a chain's next round runs on another worker: a worker
# whose last item was a warmup round used to keep that round's records unsent (flush_every
# holds them all here), and 2 to 6 in 8 such -n 2 runs lost some. Six runs, every draw counted.
cat > "$WORK/moving.pbtxt" <<'CFG'
name: "moving"
target { mixture { preset: KOU_A } }
warmup: 200
iterations: 300
seeds { values: [11, 12] }
chains_per_seed: 2
init { uniform_box { lower: 0 upper: 10 } }
output { path: "out.pemc" write_warmup: true flush_every: 100000 }
runs { name: "long" sampler { pseudo_extended { n_pseudo: 5 beta_lower: 0.001 beta_upper: 1
       nuts { step_size: 0.1 metric: DIAGONAL adaptation { enabled: true adapt_metric: true } } } } }
runs { name: "pooled" sampler { nuts { step_size: 0.1 metric: DIAGONAL
       adaptation { enabled: true adapt_metric: true } } } }
CFG
for i in 1 2 3 4 5 6; do
  run_mpi 2 "$DIST" "$WORK/moving.pbtxt" --output "$WORK/moving$i.pemc" > "$WORK/moving$i.log" 2>&1 \
    || { cat "$WORK/moving$i.log"; fail "moving $i: run failed"; }
  "$REPORT" export "$WORK/moving$i.pemc" --include-warmup --output-dir "$WORK/moving$i" 2> /dev/null \
    || fail "moving $i: export failed"
  "$REPORT" summarize "$WORK/moving$i.pemc" --format json > "$WORK/moving$i.json" 2> /dev/null
  python3 - "$WORK/moving$i/pooled.csv" "$WORK/moving$i/long.csv" "$WORK/moving$i.json" <<'PY' \
    || fail "moving $i: draws lost"
import csv, json, sys
pooled = list(csv.DictReader(open(sys.argv[1])))
warmup = lambda d: d["warmup"] in ("1", "true", "True")
summaries = [r for r in json.load(open(sys.argv[3]))["runs"] if r["run_id"] == "pooled"]
assert len(summaries) == 4, summaries
for r in summaries:
    c = str(r["chain_id"])
    used = int(r["estimates"]["pooled_warmup_iterations"])
    # The chain's warmup draws: iterations 0 .. used - 1, each once; then its 300 draws.
    its = sorted(int(d["iteration"]) for d in pooled if d["chain_id"] == c and warmup(d))
    assert its == list(range(used)), (c, used, len(its), its[:2], its[-2:])
    assert sum(1 for d in pooled if d["chain_id"] == c and not warmup(d)) == 300, c
n_long = sum(1 for _ in open(sys.argv[2])) - 1
assert n_long == 4 * 500 * 5, f"long run: {n_long} rows, expected {4 * 500 * 5}"
PY
done

# 4. Refused configs: the field and the reason.
refused() {  # refused NAME EXPECTED-TEXT CONFIG
  printf '%s\n' "$3" > "$WORK/$1.pbtxt"
  if run_mpi 1 "$DIST" "$WORK/$1.pbtxt" --output "$WORK/$1.pemc" > "$WORK/$1.log" 2>&1; then
    fail "$1: accepted"
  fi
  grep -q -- "$2" "$WORK/$1.log" || { cat "$WORK/$1.log"; fail "$1: no '$2' in the error"; }
  [ ! -e "$WORK/$1.pemc" ] || fail "$1: wrote an output file"
}
base='target { gaussian { mean: [0, 0] } } iterations: 10 seeds { values: [1] }'
refused short "sampler.nuts.adaptation.pooled.*warmup >= 40" \
  "$base warmup: 20 sampler { nuts { adaptation { pooled: true } } }"
refused rwm "sampler.rwm.adaptation.pooled.*top-level sampler.nuts or sampler.hmc" \
  "$base warmup: 100 sampler { rwm { proposal_scale: 1 adaptation { pooled: true } } }"
refused unit "sampler.hmc.adaptation.pooled.*DIAGONAL or DENSE" \
  "$base warmup: 100 sampler { hmc { n_leapfrog: 5 adaptation { pooled: true } } }"
refused pe_tempered "sampler.pseudo_extended.nuts.adaptation.pooled.*reference path" \
  "$base warmup: 100 sampler { pseudo_extended { n_pseudo: 2 instrumental: TEMPERED
   nuts { step_size: 0.1 adaptation { enabled: true adapt_metric: true pooled: true } } } }"
refused pe_metric "sampler.pseudo_extended.nuts.inverse_metric.*pooled warmup estimates the metric" \
  "$base warmup: 100 sampler { pseudo_extended { n_pseudo: 1 instrumental: REFERENCE_PATH
   nuts { step_size: 0.1 inverse_metric: [1, 1, 1] adaptation { enabled: true pooled: true } } } }"

# 5. Pseudo-extended (N = 3) on the reference path, a badly scaled 4-D Gaussian, 4 chains.
pe_sds=(0.05 1 3 20)
pe_variances=$(printf '%s\n' "${pe_sds[@]}" | awk '{ printf "%s%.10g", (NR > 1 ? ", " : ""), $1 * $1 }')
cat > "$WORK/pe.pbtxt" <<CFG
name: "pe"
target { gaussian { mean: [1, 2, 3, 4] variance: [$pe_variances] } }
sampler { pseudo_extended { n_pseudo: 3 instrumental: REFERENCE_PATH
  nuts { step_size: 0.1 metric: DIAGONAL adaptation { enabled: true adapt_metric: true } } } }
warmup: 1000
iterations: 1000
seeds { base: 5 count: 4 }
output { path: "out.pemc" }
CFG
for n in 1 3; do
  run_mpi "$n" "$DIST" "$WORK/pe.pbtxt" --output "$WORK/pe$n.pemc" > "$WORK/pe_log$n.txt" 2>&1 \
    || { cat "$WORK/pe_log$n.txt"; fail "pe -n $n: run failed"; }
  "$REPORT" export "$WORK/pe$n.pemc" 2> /dev/null | sort > "$WORK/pe$n.csv"
done
cmp -s "$WORK/pe1.csv" "$WORK/pe3.csv" || fail "pe: -n 1 and -n 3 draws differ"
grep -q "terminal buffer (.* iterations of the pseudo-extended sampler" "$WORK/pe_log1.txt" \
  || { cat "$WORK/pe_log1.txt"; fail "pe: the log does not name the extended terminal buffer"; }
grep -q "reference rho refitted to the pooled warmup's draws: mode #1 from chains 0, 1, 2, 3" \
  "$WORK/pe_log1.txt" || { cat "$WORK/pe_log1.txt"; fail "pe: no reference refitted to the draws"; }
footer_text "$WORK/pe1.pemc" > "$WORK/pe_footer.txt"
"$REPORT" export "$WORK/pe1.pemc" > "$WORK/pe_raw.csv" 2> /dev/null
python3 - "$WORK/pe_footer.txt" "$WORK/pe_raw.csv" "${pe_sds[@]}" <<PY || fail "pe: pooled warmup results"
$CHAINS_PY
import csv, math, sys
chains = footer_chains(sys.argv[1])
rows = list(csv.DictReader(open(sys.argv[2])))
sds = [float(s) for s in sys.argv[3:]]
assert len(chains) == 4, chains
assert len({c["final_step_size"] for c in chains}) == 1, "chains sample at different step sizes"
for c in chains:
    assert c["status"] == "ok", c
    assert float(c["pooled_warmup_converged"]) == 1, c
    used = int(float(c["pooled_warmup_iterations"]))
    assert 150 <= used < 1000, f"chain {c['chain_id']}: warmup {used}"
    print(f"chain {c['chain_id']}: warmup {used} iterations, step size {c['final_step_size']}")
# The export's rows are the draws' pseudo-samples with their log weights (Theorem 2.1): each
# draw's weights normalised over its pseudo-samples, averaged over the chain's draws, give its
# estimates of the means and second moments; the spread of the 4 chains' estimates gives the
# standard error.
by_draw = {}
for r in rows:
    by_draw.setdefault((r["chain_id"], r["iteration"]), []).append(r)
def chain_estimate(chain_id, name, power):
    total, n = 0.0, 0
    for (cid, _), samples in by_draw.items():
        if cid != chain_id:
            continue
        lw = [float(r["log_weight"]) for r in samples]
        top = max(lw)
        w = [math.exp(v - top) for v in lw]
        total += sum(wi * float(r[name]) ** power for wi, r in zip(w, samples)) / sum(w)
        n += 1
    assert n == 1000, (chain_id, n)
    return total / n
worst = 0.0
for i, sd in enumerate(sds):
    name, truth = f"x[{i + 1}]", i + 1.0
    for power, exact in ((1, truth), (2, truth * truth + sd * sd)):
        per_chain = [chain_estimate(c["chain_id"], name, power) for c in chains]
        est = sum(per_chain) / 4
        se = math.sqrt(sum((e - est) ** 2 for e in per_chain) / 3 / 4)
        z = (est - exact) / se
        worst = max(worst, abs(z))
        print(f"{name}^{power}: {est:.5g} (truth {exact:.5g}, z {z:+.2f})")
# 4 chains: the t distribution with 3 degrees of freedom; |t| > 12.9 has probability 0.001.
assert worst < 12.9, f"max |t| {worst:.2f}"
PY
echo "pooled warmup: OK"
