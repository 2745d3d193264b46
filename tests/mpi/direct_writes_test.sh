#!/usr/bin/env bash
# Direct writes (src/runner/direct_writes.hpp): on one host every chain leader but the collector's
# rank writes its record batches into the output itself. The log says so; the rank statistics show
# the leaders writing and the collector handling a few bytes per batch instead of the records; the
# draws are those of output.direct_writes: false, and a run stopped at a checkpoint (4 ranks) and
# resumed (3 ranks) gives the uninterrupted run's draws.
source "$(dirname "$0")/common.sh"

cat > "$WORK/g.pbtxt" <<CFG
name: "g"
target { gaussian { mean: [1.0, -2.0, 0.5, 0.0] covariance: [1,0,0,0, 0,2,0,0, 0,0,0.5,0, 0,0,0,1] } }
sampler { nuts { adaptation { enabled: true } } }
warmup: 300
iterations: 3000
seeds { values: [1, 2, 3, 4, 5, 6] }
output { path: "$WORK/unused.pemc" flush_every: 16 write_warmup: true }
CFG

sorted_draws() {  # sorted_draws FILE OUT
  "$REPORT" verify "$1" > /dev/null || fail "verify failed for $1"
  "$REPORT" export "$1" --include-warmup --output-dir "$2.d" 2> /dev/null || fail "export failed for $1"
  sort "$2.d/g.csv" > "$2"
}
stat_of() {  # stat_of LOG RANK KEY
  grep "rank stats: rank=$2 " "$1" | sed -n "s/.* $3=\([^ ]*\).*/\1/p"
}

# 4 ranks: rank 3 is the collector; ranks 0-2 lead a chain each and write directly.
run_mpi 4 "$DIST" "$WORK/g.pbtxt" --output "$WORK/direct.pemc" --log-level debug 2> "$WORK/direct.err" \
  || { tail -20 "$WORK/direct.err" >&2; fail "direct run failed"; }
grep -q "direct writes: 3 of 3 chain leaders" "$WORK/direct.err" \
  || { grep "direct writes" "$WORK/direct.err" >&2; fail "the log does not say that 3 of 3 leaders write directly"; }
for r in 0 1 2; do
  b=$(stat_of "$WORK/direct.err" "$r" direct_batches)
  [ -n "$b" ] && [ "$b" -gt 0 ] || fail "rank $r wrote no batch itself (direct_batches=$b)"
done
# The collector received no record bytes: 24 bytes per range asked for, small messages besides.
records=$(stat_of "$WORK/direct.err" 3 records)
coll_bytes=$(stat_of "$WORK/direct.err" 3 coll_bytes)
record_bytes=$(stat_of "$WORK/direct.err" 3 record_bytes)
[ "$records" -ge 18002 ] || fail "the collector counts $records records, expected at least 6 x 3000 + 2"
[ "$coll_bytes" -lt $((record_bytes / 10)) ] \
  || fail "the collector received $coll_bytes bytes for $record_bytes bytes of records"

run_mpi 4 "$DIST" "$WORK/g.pbtxt" --output "$WORK/sent.pemc" --set output.direct_writes=false \
  --log-level info 2> "$WORK/sent.err" || { tail -20 "$WORK/sent.err" >&2; fail "run without direct writes failed"; }
grep -q "direct writes: 0 of 3 chain leaders.*output.direct_writes is false" "$WORK/sent.err" \
  || { grep "direct writes" "$WORK/sent.err" >&2; fail "the log does not say why no leader writes directly"; }
sorted_draws "$WORK/direct.pemc" "$WORK/direct.csv"
sorted_draws "$WORK/sent.pemc" "$WORK/sent.csv"
# Pooled warmup may end before warmup's 300 iterations: at least the 6 x 3000 draws after it.
[ "$(wc -l < "$WORK/direct.csv")" -gt $((6 * 3000)) ] || fail "expected at least 6 x 3000 draws"
cmp -s "$WORK/direct.csv" "$WORK/sent.csv" || fail "direct writes changed the draws"

# Stopped at iteration 1700 of each chain on 4 ranks, resumed on 3.
set +e
run_mpi 4 "$DIST" "$WORK/g.pbtxt" --output "$WORK/resumed.pemc" --stop-after-iterations 1700 \
  --log-level warn 2> "$WORK/stop.err"
rc=$?
set -e
[ "$rc" -eq 4 ] || { tail -20 "$WORK/stop.err" >&2; fail "stop: status $rc, expected 4"; }
run_mpi 3 "$DIST" "$WORK/g.pbtxt" --output "$WORK/resumed.pemc" --resume --log-level info \
  2> "$WORK/resume.err" || { tail -20 "$WORK/resume.err" >&2; fail "resume failed"; }
grep -q "direct writes: 2 of 2 chain leaders" "$WORK/resume.err" \
  || { grep "direct writes" "$WORK/resume.err" >&2; fail "the resumed run's leader does not write directly"; }
sorted_draws "$WORK/resumed.pemc" "$WORK/resumed.csv"
cmp -s "$WORK/direct.csv" "$WORK/resumed.csv" || fail "stopped and resumed draws differ from the uninterrupted run's"
echo "1 passed, 0 failed"
