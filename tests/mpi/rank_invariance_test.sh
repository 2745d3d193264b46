#!/usr/bin/env bash
# A chain's draws are a pure function of (config, seed, global chain id): the same records come
# out of -n 1, -n 2 and -n 4 (file order may differ; the sorted draw rows must be identical).
source "$(dirname "$0")/common.sh"
cfg="$PEMC_SOURCE_DIR/configs/quickstart.pbtxt"
for n in 1 2 4; do
  run_mpi "$n" "$DIST" "$cfg" --output "$WORK/n$n.pemc" --iterations 500 --warmup 200 \
    --set chains_per_seed=2 --set output.write_warmup=true --log-level warn
  "$REPORT" verify "$WORK/n$n.pemc" >/dev/null || fail "verify failed for -n $n"
  "$REPORT" export "$WORK/n$n.pemc" --include-warmup | sort > "$WORK/n$n.csv"
done
rows=$(wc -l < "$WORK/n1.csv")
[ "$rows" -eq $((4 * 2 * 700 + 1)) ] || fail "expected 5601 rows (8 chains x 700 + header), got $rows"
cmp -s "$WORK/n1.csv" "$WORK/n2.csv" || fail "-n 1 and -n 2 draws differ"
cmp -s "$WORK/n1.csv" "$WORK/n4.csv" || fail "-n 1 and -n 4 draws differ"
# Per-chain summaries agree too, except wall times.
for n in 1 2 4; do
  "$REPORT" summarize "$WORK/n$n.pemc" --format json | grep -v -e wall_seconds -e cpu_seconds -e '"file"' -e '"path"' > "$WORK/s$n.json"
done
cmp -s "$WORK/s1.json" "$WORK/s4.json" || fail "summaries differ between -n 1 and -n 4"
echo "1 passed, 0 failed"
