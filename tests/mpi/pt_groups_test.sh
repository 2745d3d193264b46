#!/usr/bin/env bash
# Parallel tempering with its replicas spread over 1, 2 and 4 ranks: draws, swap decisions and
# estimates are bit-identical (pt_group_check prints a digest per scenario and also compares each
# with the same chain run alone on rank 0).
source "$(dirname "$0")/common.sh"
CHECK="$PEMC_BIN/tests/pt_group_check"
[ -x "$CHECK" ] || fail "missing $CHECK (build the pt_group_check target)"
for n in 1 2 4; do
  run_mpi "$n" "$CHECK" > "$WORK/n$n.txt" 2> "$WORK/n$n.err" || {
    cat "$WORK/n$n.txt" "$WORK/n$n.err" >&2
    fail "pt_group_check failed with -n $n"
  }
  grep -q "all scenarios match" "$WORK/n$n.txt" || fail "-n $n: group and serial runs differ"
done
cmp -s "$WORK/n1.txt" "$WORK/n2.txt" || { diff "$WORK/n1.txt" "$WORK/n2.txt" >&2; fail "-n 1 and -n 2 differ"; }
cmp -s "$WORK/n1.txt" "$WORK/n4.txt" || { diff "$WORK/n1.txt" "$WORK/n4.txt" >&2; fail "-n 1 and -n 4 differ"; }
cat "$WORK/n4.err" >&2
echo "1 passed, 0 failed"
