#!/usr/bin/python3
"""pooled_log_z.py SUMMARY.json -> the checker's "--log-z EST --log-z-se SE" (nothing without a log Z).

The run's log Z as a user reads it from `pemc-report summarize --format json`: the mean of the "ok"
chains' footer log_z, with the standard error their own reported log_z_se give that mean,
sqrt(sum se_i^2) / n. The SE is pemc's claim, so the checker's z tests it (issue 36: log Z within
4 reported SEs). Without any log_z_se only --log-z is printed (the checker then uses the truth's SE).
"""
import json, math, sys

runs = json.load(open(sys.argv[1]))["runs"]
est = [r["estimates"] for r in runs if r.get("status") == "ok" and math.isfinite(r.get("estimates", {}).get("log_z", math.nan))]
if est:
    z = sum(e["log_z"] for e in est) / len(est)
    se = [e.get("log_z_se") for e in est]
    out = f"--log-z {z!r}"
    if all(s is not None and math.isfinite(s) for s in se):
        out += f" --log-z-se {math.sqrt(sum(s * s for s in se)) / len(se)!r}"
    print(out)
