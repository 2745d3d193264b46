#!/usr/bin/env bash
# A chain's draws are a pure function of (config, seed, global chain id): the same records come
# out of -n 1, -n 2 and -n 4 (file order may differ; the sorted draw rows must be identical).
source "$(dirname "$0")/common.sh"
cfg="$PEMC_SOURCE_DIR/configs/quickstart.pbtxt"
for n in 1 2 4; do
  run_mpi "$n" "$DIST" "$cfg" --output "$WORK/n$n.pemc" --iterations 500 --warmup 200 \
    --set chains_per_seed=2 --set output.write_warmup=true --log-level warn
  "$REPORT" verify "$WORK/n$n.pemc" >/dev/null || fail "verify failed for -n $n"
  # The two runs have different columns (pe_n5's weighted samples): one CSV per run.
  "$REPORT" export "$WORK/n$n.pemc" --include-warmup --output-dir "$WORK/csv$n" 2> /dev/null \
    || fail "export failed for -n $n"
  for run in pe_n5 nuts; do sort "$WORK/csv$n/$run.csv" > "$WORK/n$n.$run.csv"; done
done
# 4 chains x 700 draws per run; pe_n5 has a row per pseudo-sample (5 per draw).
rows=$(wc -l < "$WORK/n1.nuts.csv")
[ "$rows" -eq $((4 * 700 + 1)) ] || fail "expected 2801 nuts rows (4 chains x 700 + header), got $rows"
rows=$(wc -l < "$WORK/n1.pe_n5.csv")
[ "$rows" -eq $((4 * 700 * 5 + 1)) ] || fail "expected 14001 pe_n5 rows (4 chains x 700 x 5 + header), got $rows"
for run in pe_n5 nuts; do
  cmp -s "$WORK/n1.$run.csv" "$WORK/n2.$run.csv" || fail "-n 1 and -n 2 $run draws differ"
  cmp -s "$WORK/n1.$run.csv" "$WORK/n4.$run.csv" || fail "-n 1 and -n 4 $run draws differ"
done
# Per-chain summaries agree too, except wall times.
for n in 1 2 4; do
  "$REPORT" summarize "$WORK/n$n.pemc" --format json | grep -v -e wall_seconds -e cpu_seconds -e '"file"' -e '"path"' > "$WORK/s$n.json"
done
cmp -s "$WORK/s1.json" "$WORK/s4.json" || fail "summaries differ between -n 1 and -n 4"
echo "1 passed, 0 failed"
