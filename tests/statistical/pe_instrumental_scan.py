#!/usr/bin/env python3
"""Scan of pseudo-extended's instrumental shape a (g(beta) = Beta(a, 1)) on separated mixtures.

The measurements behind the dimension-derived default of beta_instrumental.a and the thresholds of
the weight-degeneracy warning (docs/pseudo-extended-defaults.md). For each a it runs pseudo-extended
NUTS (beta_lower 0.001, the NUTS settings of configs/quickstart.pbtxt) through pemc-dist as one study
and prints a markdown row: RMSE of E[x] over chains and coordinates (pemc-report compare), the mode
weights (4-mode mixture only), and the chains' degeneracy statistics (the footer's estimates).

  pe_instrumental_scan.py --target mixture --dim 10 --n-pseudo 5 --a 1,5,6,7 [--seeds 8]
                          [--iterations 10000] [--np 3] [--bin build] [--out out/pe_scan]
  pe_instrumental_scan.py --target kou --a 1,1.5,2,3 --iterations 20000

mixture: 4 components with means (+-6, +-6, 0, ..., 0), variance 0.25, weights 0.1 (+,+),
0.2 (+,-), 0.3 (-,+), 0.4 (-,-); initial points uniform in [-2, 2]^d. kou: the Kou (a) preset as
in the quickstart (initial points uniform in [0, 10]^2), seeds 11, 12, ... . Mixture seeds 1, 2, ...
A chain "finds" a mode when its weighted frequency there is at least half the mode's weight.
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
from collections import defaultdict

WEIGHTS = {(1, 1): 0.1, (1, -1): 0.2, (-1, 1): 0.3, (-1, -1): 0.4}


def config(args, a_values, out_path):
    seeds = ", ".join(str(s + (11 if args.target == "kou" else 1)) for s in range(args.seeds))
    lines = []
    if args.target == "kou":
        lines.append("target { mixture { preset: KOU_A } }")
        lines.append("init { uniform_box { lower: 0 upper: 10 } }")
    else:
        zeros = ", 0" * (args.dim - 2)
        lines.append("target { mixture {")
        for (s1, s2), w in WEIGHTS.items():
            lines.append(f"  components {{ weight: {w} mean: [{6 * s1}, {6 * s2}{zeros}] variance: 0.25 }}")
        lines.append("} }")
    lines += [f"warmup: {args.warmup}", f"iterations: {args.iterations}",
              f"seeds {{ values: [{seeds}] }}", f'output {{ path: "{out_path}" }}']
    for a in a_values:
        lines.append(f'runs {{ name: "a{a}" sampler {{ pseudo_extended {{ n_pseudo: {args.n_pseudo} '
                     f"beta_lower: 0.001 beta_instrumental {{ a: {a} }}\n"
                     "  nuts { step_size: 0.1 metric: DIAGONAL adaptation { enabled: true adapt_metric: true } } } } }")
    return "\n".join(lines) + "\n"


def report_json(bin_dir, *cmd):
    out = subprocess.run([os.path.join(bin_dir, "pemc-report"), *cmd, "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def mode_weights(bin_dir, pemc, csv_dir):
    """Per (run, chain): the weighted frequency of each quadrant of (x[1], x[2])."""
    subprocess.run([os.path.join(bin_dir, "pemc-report"), "export", pemc, "--output-dir", csv_dir,
                    "--overwrite"], check=True, capture_output=True)
    result = {}
    for name in os.listdir(csv_dir):
        with open(os.path.join(csv_dir, name)) as f:
            sums = defaultdict(lambda: defaultdict(float))
            for row in csv.DictReader(f):
                w = math.exp(float(row["log_weight"]))
                q = (1 if float(row["x[1]"]) > 0 else -1, 1 if float(row["x[2]"]) > 0 else -1)
                key = (row["run_id"], int(row["chain_id"]))
                sums[key][q] += w
                sums[key]["total"] += w
            for key, s in sums.items():
                result[key] = {q: s[q] / s["total"] for q in WEIGHTS}
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--target", choices=["mixture", "kou"], default="mixture")
    p.add_argument("--dim", type=int, default=10)
    p.add_argument("--n-pseudo", type=int, default=5)
    p.add_argument("--a", required=True, help="comma-separated shapes a")
    p.add_argument("--seeds", type=int, default=8)
    p.add_argument("--iterations", type=int, default=10000)
    p.add_argument("--warmup", type=int, default=1000)
    p.add_argument("--np", type=int, default=3)
    p.add_argument("--bin", default="build")
    p.add_argument("--out", default="out/pe_scan")
    args = p.parse_args()
    if args.target == "kou":
        args.dim = 2
    a_values = args.a.split(",")
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, f"{args.target}_d{args.dim}_n{args.n_pseudo}")
    pemc = os.path.abspath(stem + ".pemc")
    with open(stem + ".pbtxt", "w") as f:
        f.write(config(args, a_values, pemc))
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    subprocess.run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-n", str(args.np),
                    os.path.join(args.bin, "pemc-dist"), stem + ".pbtxt", "--overwrite",
                    "--log-level", "error"], check=True, env=env)
    rmse = {g["key"]: g["rmse_all"]["mean"] for g in report_json(args.bin, "compare", pemc)["groups"]}
    chains = defaultdict(list)
    for r in report_json(args.bin, "summarize", pemc)["runs"]:
        chains[r["run_id"]].append(r)
    modes = mode_weights(args.bin, pemc, stem + "_csv") if args.target == "mixture" else {}
    stats = ["max_weight_mean", "kish_ess_per_draw", "beta_at_lower_fraction", "weight_handoff_rate"]
    print(f"{args.target}, d = {args.dim}, N = {args.n_pseudo}, {args.seeds} seeds x "
          f"{args.iterations} draws")
    print("| a | a - d/2 | RMSE E[x] | " + ("max abs weight error | chains finding all modes | "
          if modes else "") + " | ".join(stats) + " (mean [min, max] over chains) | chains warned |")
    print("|---" * (4 + len(stats) + (2 if modes else 0)) + "|")
    for a in a_values:
        run = f"a{a}"
        cs = chains[run]
        cells = [a, f"{float(a) - args.dim / 2:g}", f"{rmse[run]:.3f}"]
        if modes:
            errs = [abs(modes[(run, c["chain_id"])][q] - w) for c in cs for q, w in WEIGHTS.items()]
            found = sum(all(modes[(run, c["chain_id"])][q] >= w / 2 for q, w in WEIGHTS.items()) for c in cs)
            cells += [f"{max(errs):.3f}", f"{found}/{len(cs)}"]
        for s in stats:
            v = [c["estimates"][s] for c in cs]
            cells.append(f"{sum(v) / len(v):.5g} [{min(v):.3g}, {max(v):.3g}]")
        cells.append(f"{sum(1 for c in cs if c['warnings'])}/{len(cs)}")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
