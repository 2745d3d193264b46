#!/usr/bin/python3
"""table.py OUT --cases "a b" --samplers "x y" [--require-pass "pt ct"]

Collects OUT/cells/<case>__<sampler>/cell.json (cell.py) into OUT/table.md and OUT/results.json:
a case x sampler matrix of verdicts (wrong-and-trusted cells in bold capitals), then one row per
cell. Exit 1 when a cell could not run (invalid config, failed, timeout), is wrong and trusted, or
belongs to a sampler in --require-pass and did not pass the checker; else 0.
"""
import argparse, json, math, os, sys

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--cases", required=True)
ap.add_argument("--samplers", required=True)
ap.add_argument("--require-pass", default="")
a = ap.parse_args()
cases, samplers, required = a.cases.split(), a.samplers.split(), set(a.require_pass.split())

cells = {}
for c in cases:
    for s in samplers:
        p = os.path.join(a.out, "cells", f"{c}__{s}", "cell.json")
        cells[c, s] = json.load(open(p)) if os.path.exists(p) else dict(case=c, sampler=s, status="missing",
                                                                            verdict="missing")


def short(v):
    return {"WRONG AND TRUSTED": "**WRONG & TRUSTED**", "WRONG AND TRUSTED (log Z)": "**WRONG & TRUSTED (log Z)**",
            "wrong, flagged": "wrong, flagged", "pass (flagged)": "pass (flagged)"}.get(v, v)


def num(v, f="{:.2f}"):
    return "-" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f.format(v)


lines = ["| case | " + " | ".join(samplers) + " |", "|---|" + "---|" * len(samplers)]
for c in cases:
    lines.append(f"| {c} | " + " | ".join(short(cells[c, s]["verdict"]) for s in samplers) + " |")
lines += ["", "| case | sampler | status | checker | max abs z (worst) | modes visited | max R-hat | "
          "log Z error (z) | CPU s | pemc flagged | verdict |", "|---|---|---|---|---|---|---|---|---|---|---|"]
for c in cases:
    for s in samplers:
        r = cells[c, s]
        z = f"{num(r.get('max_abs_z'))} ({r['worst']})" if r.get("max_abs_z") is not None else "-"
        modes = f"{r['modes_visited']} of {r['n_modes']}" if "n_modes" in r else "-"
        lz = r.get("log_z")
        lzs = f"{lz['error']:+.3f} ({lz['z']:+.1f})" if lz else "-"
        said = "; ".join(r.get("flags", [])) or "no"
        if r.get("error"):
            said = (said + "; " if said != "no" else "") + "error: " + r["error"].replace("|", "/")[:160]
        lines.append(f"| {c} | {s} | {r['status']} | {r.get('check', '-')} | {z} | {modes} | "
                     f"{num(r.get('max_rhat'), '{:.3f}')} | {lzs} | {num(r.get('cpu_seconds'), '{:.1f}')} | {said} | "
                     f"{short(r['verdict'])} |")
bad = [(c, s, cells[c, s]["verdict"]) for c in cases for s in samplers
       if cells[c, s]["status"] != "ok" or "TRUSTED" in cells[c, s]["verdict"]
       or (s in required and cells[c, s].get("check") != "PASS")]
n_wt = sum("TRUSTED" in r["verdict"] for r in cells.values())
lines += ["", f"{len(cells)} cells: {sum(r['verdict'].startswith('pass') for r in cells.values())} pass, "
              f"{n_wt} wrong and trusted, {sum(r['status'] != 'ok' for r in cells.values())} could not run."]
open(os.path.join(a.out, "table.md"), "w").write("\n".join(lines) + "\n")
json.dump([cells[c, s] for c in cases for s in samplers], open(os.path.join(a.out, "results.json"), "w"), indent=1)
print("\n".join(lines))
print(f"\n{len(cells) - len(bad)} passed, {len(bad)} failed")
sys.exit(1 if bad else 0)
