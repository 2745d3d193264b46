#!/usr/bin/env bash
# What lies beside a config is checked, not trusted (docs/bad-inputs.md, "Trust boundaries"):
#  1. links planted at the names pemc-dist creates its files at are refused (exit 2, target
#     untouched), and output, checkpoint and lock paths may not coincide;
#  2. --resume refuses inputs whose content changed since the checkpoint: a data file, a number
#     file, a plugin library (the Stan program, its data and its compiled model: stan_cache_test.sh);
#  3. pemc-report reads a record file without running or opening anything its header names, bounds
#     the header before allocating, and checks the file's structure (verify);
#  4. FIFOs are refused where a regular file is expected, without hanging;
#  5. a stop signal during start-up ends the run at once (exit 4, nothing written); studies are
#     validated in linear time up to their run limit.
source "$(dirname "$0")/common.sh"
export OMPI_MCA_mpi_yield_when_idle=1
cd "$WORK"
TOOL=(python3 "$PEMC_SOURCE_DIR/tests/support/record_tool.py")
passed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }
# KEEP_GOING=1: report every failed check instead of stopping at the first (to see what an older
# build does against each attack); the script still fails at the end.
failed=0
if [ "${KEEP_GOING:-0}" = 1 ]; then fail() { echo "FAIL: $*" >&2; failed=$((failed + 1)); }; fi

# expect_exit NAME CODE PATTERN COMMAND...: exit status CODE (within 60 s: a hang fails) and a
# message matching PATTERN.
expect_exit() {
  local name=$1 code=$2 pattern=$3 rc
  shift 3
  set +e
  if declare -F "$1" > /dev/null; then "$@"; else timeout 60 "$@"; fi > "$name.log" 2>&1
  rc=$?
  set -e
  [ "$rc" -eq "$code" ] || { cat "$name.log"; fail "$name: exit $rc, expected $code"; }
  grep -qE -- "$pattern" "$name.log" || { cat "$name.log"; fail "$name: no message matching '$pattern'"; }
  echo "$name: $(grep -m1 -E -- "$pattern" "$name.log" | cut -c1-240)"
}

cat > g.pbtxt <<CFG
target { gaussian { mean: [1.0, -2.0] } }
sampler { hmc { step_size: 0.3 n_leapfrog: 8 } }
warmup: 20
iterations: 400
seeds { values: [3] }
init { uniform_radius: 2.0 }
output { path: "g.pemc" }
CFG
echo "precious" > victim.txt

# ---- 1. links at the names pemc-dist creates --------------------------------------------------
planted() {  # planted NAME LINK [pemc-dist options]: a link at LINK is refused, victim untouched
  local name=$1 link=$2
  shift 2
  ln -sf "$PWD/victim.txt" "$link"
  expect_exit "link-$name" 2 "$link is a symbolic link \(to $PWD/victim.txt\): pemc-dist creates .* itself and never follows a link there; remove the link" \
    run_mpi 2 "$DIST" g.pbtxt --log-level warn "$@"
  [ "$(cat victim.txt)" = precious ] || fail "link-$name: the link's target was written"
  rm -f "$link"
}
planted lock g.pemc.lock --overwrite
planted ckpt-tmp g.pemc.ckpt.tmp --overwrite
planted resume-tmp g.pemc.resume.tmp --overwrite
planted ckpt g.pemc.ckpt --overwrite
planted output g.pemc --overwrite
planted own-ckpt-lock mine.ckpt.lock --overwrite --set checkpoint.path=mine.ckpt
cp g.pbtxt keep.pbtxt
ln keep.pbtxt g.pemc.lock
expect_exit lock-hard-link 2 "g.pemc.lock has 2 names \(hard links\): pemc-dist creates the output's lock file itself" \
  run_mpi 1 "$DIST" g.pbtxt --overwrite
cmp -s g.pbtxt keep.pbtxt || fail "lock-hard-link: the linked file was written"
rm -f g.pemc.lock keep.pbtxt
# A link planted while the run goes on: the next checkpoint replaces it, never writes through it.
mpirun --oversubscribe -n 2 "$DIST" g.pbtxt --overwrite --iterations 1000000000 --set output.thin=1000 \
  --set checkpoint.every_seconds=0.3 --log-level warn > mid.log 2>&1 &
mid=$!
trap 'kill -KILL "$mid" 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 1 200); do [ -e g.pemc.ckpt ] && break; sleep 0.1; done
ln -sf "$PWD/victim.txt" g.pemc.ckpt.tmp
sleep 1
kill -USR1 "$mid"
set +e; wait "$mid"; rc=$?; set -e
trap 'rm -rf "$WORK"' EXIT
[ "$rc" -eq 4 ] || { cat mid.log; fail "mid-run link: exit $rc, expected 4 after SIGUSR1"; }
[ "$(cat victim.txt)" = precious ] || fail "mid-run link: a checkpoint was written through the link"
[ ! -L g.pemc.ckpt.tmp ] && [ ! -e g.pemc.ckpt.tmp ] || fail "mid-run link: the link is still there"
ok "links (and a hard link at the lock) at every name pemc-dist creates are refused; a link planted mid-run is replaced, not followed"

rm -f g.pemc g.pemc.ckpt
expect_exit same-as-lock 2 "checkpoint.path: pemc-dist would create the output's lock file and the checkpoint as the same file 'g.pemc.lock'" \
  run_mpi 1 "$DIST" g.pbtxt --overwrite --set checkpoint.path=g.pemc.lock
expect_exit same-as-copy 2 "checkpoint.path: pemc-dist would create the resume's copy of the record file and the checkpoint as the same file" \
  run_mpi 1 "$DIST" g.pbtxt --overwrite --set checkpoint.path=./g.pemc.resume.tmp
[ ! -e g.pemc ] || fail "a refused run created its output"
ok "output, checkpoint and lock paths may not coincide"

# ---- 2. a resume on changed inputs is refused, naming the file ---------------------------------
stop_and_change() {  # stop_and_change NAME CONFIG FILE COMMAND: stop at a checkpoint, change FILE, resume
  local name=$1 config=$2 file=$3 change=$4 rc
  set +e
  run_mpi 2 "$DIST" "$config" --overwrite --stop-after-iterations 30 --log-level warn > "$name.stop.log" 2>&1
  rc=$?
  set -e
  [ "$rc" -eq 4 ] || { cat "$name.stop.log"; fail "$name: stop exit $rc"; }
  cp "${config%.pbtxt}.pemc" "$name.before.pemc"
  eval "$change"
  expect_exit "resume-$name" 2 "cannot resume: .*'$file' is not the file the checkpointed run read: its content changed \(SHA-256 [0-9a-f]{16}\.\.\. at the checkpoint, [0-9a-f]{16}\.\.\. now\)" \
    run_mpi 2 "$DIST" "$config" --resume --log-level warn
  cmp -s "${config%.pbtxt}.pemc" "$name.before.pemc" || fail "$name: the refused resume changed the record file"
}
python3 - <<'PY'
import random
random.seed(5)
with open("hs.csv", "w") as f:
    f.write("y,x1,x2,x3\n")
    for _ in range(60):
        x = [random.gauss(0, 1) for _ in range(3)]
        f.write("%d,%.4f,%.4f,%.4f\n" % (int(x[0] + 0.3 * random.gauss(0, 1) > 0), *x))
PY
cat > hs.pbtxt <<CFG
target { horseshoe_logistic { data_file: "hs.csv" p0: 1 } }
sampler { nuts { step_size: 0.1 adaptation { enabled: true } } }
warmup: 20
iterations: 60
seeds { values: [1] }
output { path: "hs.pemc" }
CFG
# Labels flipped, the file's name and size unchanged.
stop_and_change data hs.pbtxt hs.csv "sed -i -e '2,\$s/^1,/x,/' -e '2,\$s/^0,/1,/' -e '2,\$s/^x,/0,/' hs.csv"
echo "0.1 0.1" > m.txt
cat > st.pbtxt <<CFG
target { gaussian { mean: [0.5, -0.5] } }
sampler { simulated_tempering { hmc { step_size: 0.3 n_leapfrog: 5 } reference { mean_file: "m.txt" }
  ladder { n_levels: 4 } } }
warmup: 20
iterations: 60
seeds { values: [1] }
output { path: "st.pemc" }
CFG
stop_and_change numbers st.pbtxt m.txt "echo '0.2 0.1' > m.txt"
cp "$PEMC_BIN/libpemc_example_plugin.so" plugin.so
cat > pl.pbtxt <<CFG
target { plugin { library: "$PWD/plugin.so" argument: "dim=2" } }
sampler { hmc { step_size: 0.3 n_leapfrog: 5 } }
warmup: 20
iterations: 60
seeds { values: [1] }
output { path: "pl.pemc" }
CFG
stop_and_change plugin pl.pbtxt "$PWD/plugin.so" "printf 'x' >> plugin.so"
cp "$PEMC_BIN/libpemc_example_plugin.so" plugin.so
run_mpi 2 "$DIST" pl.pbtxt --resume --log-level warn || fail "the restored plugin does not resume"
ok "a data file, a number file and a plugin library changed under the same name stop --resume (exit 2, file named)"

# ---- 3. record files are read, never run ------------------------------------------------------
run_mpi 2 "$DIST" g.pbtxt --overwrite --iterations 50 --log-level warn
"${TOOL[@]}" decode g.pemc 0 > header.txt
n=$("${TOOL[@]}" kinds g.pemc | wc -l)
cat > evil.c <<'C'
#include <stdio.h>
__attribute__((constructor)) static void ran(void) { FILE* f = fopen("EVIL_RAN", "w"); if (f) fclose(f); }
C
cc -shared -fPIC -o evil.so evil.c
echo "secret-line-of-a-private-file" > secret.txt
mkfifo data.fifo
with_target() {  # with_target TEXT OUT: g.pemc whose header's target is TEXT
  python3 - "$1" > hdr.txt <<'PY'
import re, sys
text = open("header.txt").read()
print(re.sub(r"target \{\n      gaussian \{.*?\n      \}\n    \}", sys.argv[1], text, count=1, flags=re.S))
PY
  "${TOOL[@]}" build "$2" @hdr.txt "g.pemc:1-"
}
with_target "target { plugin { library: \"$PWD/evil.so\" } }" h-plugin.pemc
with_target "target { horseshoe_logistic { data_file: \"$PWD/secret.txt\" } }" h-secret.pemc
with_target "target { radon { data_file: \"$PWD/data.fifo\" } }" h-fifo.pemc
with_target "target { stan { model_file: \"$PWD/m.stan\" cache_dir: \"$PWD/header-cache\" } }" h-stan.pemc
echo "parameters { real x; } model { x ~ normal(0, 1); }" > m.stan
for f in h-plugin h-secret h-fifo h-stan; do
  for cmd in summarize compare diagnose "export --output-dir $f.csv" "plot --kind hist -o $f.png" "errors" verify; do
    set +e
    timeout 60 "$REPORT" $cmd $f.pemc > "$f.out" 2>&1
    rc=$?
    set -e
    [ "$rc" -ne 124 ] || fail "$f: pemc-report $cmd hangs"
    [ ! -e EVIL_RAN ] || fail "$f: pemc-report $cmd ran the header's plugin"
    ! grep -q secret-line "$f.out" || fail "$f: pemc-report $cmd shows a line of a file the header names"
    [ ! -e header-cache ] || fail "$f: pemc-report $cmd compiled the header's Stan model"
  done
done
expect_exit no-config-lpd 0 "no held-out lpd: the held-out lpd needs the target of run 'hs': pass --config CONFIG" \
  "$REPORT" summarize hs.pemc --format json
"$REPORT" summarize hs.pemc --format json --config hs.pbtxt | grep -c '"held_out_lpd"' > /dev/null ||
  fail "summarize --config gives no held-out lpd"
ok "pemc-report runs no plugin, compiles no model and opens no file a header names (summarize, compare, diagnose, export, plot, errors, verify)"

sed 's/^  dim: 2$/  dim: 2147483647/' header.txt > hdr.txt
grep -q "dim: 2147483647" hdr.txt || fail "could not make the hostile header"
"${TOOL[@]}" build h-dim.pemc @hdr.txt "g.pemc:1-"
for cmd in summarize diagnose "export" "plot --kind hist -o h.png" verify; do
  expect_exit "dim-${cmd%% *}" 2 "h-dim.pemc: the header is not one pemc-dist writes: dim is 2147483647, outside \[0, 33554432\]" \
    "$REPORT" $cmd h-dim.pemc
done
ok "a header asking for a dimension of 2^31 - 1 is refused before anything is allocated (exit 2)"

last=$((n - 1))
"${TOOL[@]}" build two-headers.pemc g.pemc:0 g.pemc:0 "g.pemc:1-"
"${TOOL[@]}" build two-footers.pemc "g.pemc:0-" "g.pemc:$last"
"${TOOL[@]}" build footer-count.pemc "g.pemc:0-$((last - 2))" "g.pemc:$last"
"${TOOL[@]}" decode g.pemc 1 | sed '0,/state: /{/state: /d}' > short.txt
"${TOOL[@]}" build short-draw.pemc g.pemc:0 @short.txt "g.pemc:2-$((last - 1))"
"${TOOL[@]}" decode g.pemc 1 | sed 's/run_id: "g"/run_id: "intruder"/' > intruder.txt
"${TOOL[@]}" build unknown-run.pemc g.pemc:0-2 @intruder.txt "g.pemc:3-$((last - 1))"
expect_exit verify-two-headers 1 "DAMAGED at byte [0-9]+ \(record 1\): inconsistent file: a second header" "$REPORT" verify two-headers.pemc
expect_exit verify-two-footers 1 "inconsistent file: a record after the footer" "$REPORT" verify two-footers.pemc
expect_exit verify-footer-count 1 "inconsistent file: the footer counts $last records before it, the file holds $((last - 1))" "$REPORT" verify footer-count.pemc
expect_exit verify-short-draw 1 "inconsistent file: a draw of run 'g' with a state of 1 coordinates, the header says 2" "$REPORT" verify short-draw.pemc
expect_exit verify-unknown-run 1 "inconsistent file: a record of run 'intruder', which the header does not list" "$REPORT" verify unknown-run.pemc
expect_exit summarize-short-draw 1 "damaged at byte [0-9]+ \(record 1\): inconsistent file: a draw of run 'g' with a state of 1" "$REPORT" summarize short-draw.pemc
expect_exit export-unknown-run 1 "inconsistent file: a record of run 'intruder'" "$REPORT" export unknown-run.pemc
"$REPORT" verify g.pemc | grep -c ": OK (" > /dev/null || fail "the intact file does not verify"
ok "verify checks the structure: one header, one footer counting the records, draws of the header's runs and dimension"

# ---- 4. FIFOs where a regular file is expected ------------------------------------------------
mkfifo out.fifo in.fifo.pemc cfg.fifo.pbtxt
expect_exit fifo-output 2 "out.fifo is a FIFO \(named pipe\)" run_mpi 2 "$DIST" g.pbtxt --output out.fifo --overwrite
expect_exit fifo-verify 2 "in.fifo.pemc is a FIFO \(named pipe\), not a record file" "$REPORT" verify in.fifo.pemc
expect_exit fifo-config 2 "config 'cfg.fifo.pbtxt' is a FIFO \(named pipe\), not a regular file" "$DIST" cfg.fifo.pbtxt --validate
sed 's/hs.csv/data.fifo/' hs.pbtxt > fifo-data.pbtxt
expect_exit fifo-data 2 "target.horseshoe_logistic.data_file: is a FIFO \(named pipe\), not a regular file" "$DIST" fifo-data.pbtxt --validate
ok "FIFOs as output, record file, config and data file are refused at once"

# ---- 5. stop signals during start-up; large studies --------------------------------------------
study() {  # study N FILE: a study of N runs
  python3 - "$1" > "$2" <<'PY'
import sys
print('target { banana {} }\nwarmup: 10\niterations: 10\nseeds { base: 1 count: 1 }\noutput { path: "study.pemc" }')
for i in range(int(sys.argv[1])):
    print('runs { name: "r%d" sampler { hmc { step_size: 0.3 n_leapfrog: 5 } } }' % i)
PY
}
study 3000 s3000.pbtxt
t0=$(date +%s.%N)
"$DIST" s3000.pbtxt --validate > s3000.log 2>&1 || { tail -3 s3000.log; fail "a study of 3000 runs does not validate"; }
secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
study 10001 s10001.pbtxt
expect_exit study-cap 2 "runs: the study has 10001 runs \(runs and run_files\), more than the limit 10000" "$DIST" s10001.pbtxt --validate
# SIGTERM while rank 0 validates: the run stops at once, before it writes anything.
# handlers_ready PID N: N pemc-dist children of PID, each catching SIGTERM (its handler is in).
handlers_ready() {
  local p mask count=0
  for p in $(pgrep -P "$1" -x pemc-dist); do
    mask=$(awk '/^SigCgt:/ { print $2 }' "/proc/$p/status" 2>/dev/null) || return 1
    [ -n "$mask" ] && (( (16#$mask >> 14) & 1 )) || return 1
    count=$((count + 1))
  done
  [ "$count" -eq "$2" ]
}
mpirun --oversubscribe -n 2 "$DIST" s3000.pbtxt --overwrite > sig.log 2>&1 &
pid=$!
for _ in $(seq 1 300); do handlers_ready "$pid" 2 && break; sleep 0.1; done
t1=$(date +%s.%N)
pkill -TERM -P "$pid" -x pemc-dist  # every rank, as mpirun and srun forward a signal
set +e; timeout 60 tail --pid="$pid" -f /dev/null; wait "$pid"; rc=$?; set -e
took=$(awk -v a="$t1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
[ "$rc" -eq 4 ] || { cat sig.log; fail "SIGTERM during start-up: exit $rc, expected 4"; }
grep -q "signal 15 (SIGTERM) received while starting up: stopped before the run wrote anything" sig.log ||
  { cat sig.log; fail "SIGTERM during start-up: no message"; }
[ ! -e study.pemc ] || fail "SIGTERM during start-up: an output was written"
ok "a study of 3000 runs validates in ${secs}s; 10001 runs are refused; SIGTERM during start-up ends the run ${took}s later with exit 4, nothing written"

[ "$failed" -eq 0 ] || { echo "hostile_test: $failed failed checks" >&2; exit 1; }
echo "hostile_test: all $passed checks passed"
