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
# On a difference, the first differing rows (and how many rows each side has) go to the log.
same_draws() {  # same_draws RUN N
  cmp -s "$WORK/n1.$1.csv" "$WORK/n$2.$1.csv" && return 0
  echo "rows: -n 1 $(wc -l < "$WORK/n1.$1.csv"), -n $2 $(wc -l < "$WORK/n$2.$1.csv"); first differences:"
  diff "$WORK/n1.$1.csv" "$WORK/n$2.$1.csv" | head -8 | cut -c1-300
  return 1
}
for run in pe_n5 nuts; do
  same_draws "$run" 2 || fail "-n 1 and -n 2 $run draws differ"
  same_draws "$run" 4 || fail "-n 1 and -n 4 $run draws differ"
done
# Per-chain summaries agree too, except wall times.
for n in 1 2 4; do
  "$REPORT" summarize "$WORK/n$n.pemc" --format json | grep -v -e wall_seconds -e cpu_seconds -e '"file"' -e '"path"' > "$WORK/s$n.json"
done
cmp -s "$WORK/s1.json" "$WORK/s4.json" || fail "summaries differ between -n 1 and -n 4"
echo "1 passed, 0 failed"
