#!/usr/bin/python3
"""cell.py CELL_DIR CASE SAMPLER TRUTH.json WARMUP ITERATIONS BLOCK

One cell of the multimodal study (tests/statistical/multimodal_study.sh): reads what the driver left
in CELL_DIR (exit_code, time.txt, run.log, summary.json, diagnose.json, check.json) and writes
CELL_DIR/cell.json with the cell's status, the checker's verdict, what pemc said, and the verdict
that matters to issue 36; prints one line.

What counts as pemc flagging the result (every one is something pemc shows the user):
  - a chain's footer warnings (`summarize`'s "warnings"),
  - any key containing "untrusted" whose value is true or non-zero, in `summarize` or `diagnose` JSON
    (log_z_untrusted and its reasons; keys added later are caught too), diagnose's
    log_z_trust.chains_disagree,
  - `diagnose`'s max R-hat above 1.01 (diagnose marks such quantities "<- R-hat > 1.01").
A log Z counts as flagged only by the untrusted keys or chains_disagree (pemc's statement on log Z).
Verdicts: "pass", "pass (flagged)", "wrong, flagged", "WRONG AND TRUSTED" (the checker failed on the
moments or modes and pemc said nothing), "WRONG AND TRUSTED (log Z)" (log Z off by > 4.5 SE and not
flagged untrusted), or the status when no check was possible: "invalid config" (pemc-dist exit 2),
"failed" (any other failure, with pemc's first error line), "timeout" (the study's CPU or wall limit).
"""
import itertools, json, math, os, re, sys

cell, case, sampler, truth_path, warmup, iterations, block = sys.argv[1:8]
truth = json.load(open(truth_path))


def load(name):
    try:
        return json.load(open(os.path.join(cell, name)))
    except (OSError, ValueError):
        return None


def read(name):
    try:
        return open(os.path.join(cell, name)).read()
    except OSError:
        return ""


def first_error(text):
    """pemc's first error line with the indented lines that follow it (a config's problems)."""
    text = re.sub(r"\S*/run\.pbtxt", "run.pbtxt", text)   # the cell's config, without its long path
    lines = [l.rstrip() for l in text.splitlines() if l.strip()]
    for i, l in enumerate(lines):
        if re.search(r"error|refused|invalid|failed|abort|exception", l, re.I):
            more = [m.strip() for m in itertools.takewhile(lambda m: m[:1].isspace(), lines[i + 1:i + 5])]
            return " / ".join([l.strip()] + more)[:500]
    return lines[-1].strip()[:300] if lines else ""


def untrusted_keys(obj, path=""):
    """Every key containing 'untrusted' with a true/non-zero value, anywhere in obj."""
    found = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if "untrusted" in k and not isinstance(v, (dict, list)) and v not in (0, 0.0, False, None, ""):
                found.append(k)
            found += untrusted_keys(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for v in obj:
            found += untrusted_keys(v, path)
    return found


rc = int(read("exit_code").strip() or -1)
time_fields = read("time.txt").split()
wall = float(time_fields[-3]) if len(time_fields) >= 3 else None
summary, diagnose, check = load("summary.json"), load("diagnose.json"), load("check.json")
out = dict(case=case, sampler=sampler, block=block, warmup=int(warmup), iterations=int(iterations), exit_code=rc,
           wall_seconds=wall, family=truth.get("family"))

# Status: could the run be checked at all?
limits = read("limits").split() or ["?", "?"]
if rc == 124:
    out["status"], out["error"] = "timeout", f"no result within CELL_TIMEOUT ({limits[1]} s wall)"
elif "signal 24" in read("run.log"):   # SIGXCPU: a rank used up its CELL_CPU
    out["status"], out["error"] = "timeout", f"a rank reached the CPU limit ({limits[0]} CPU s per rank)"
elif rc == 2:
    out["status"], out["error"] = "invalid config", first_error(read("run.log"))
elif rc != 0 or summary is None or check is None:
    out["status"] = "failed"
    out["error"] = first_error(read("run.log")) if rc != 0 else first_error(read("export.log") + read("check.txt"))
else:
    out["status"] = "ok"

# What pemc said (also for failed runs that left a record file).
flags, logz_flags, said = [], [], []
if summary:
    chains = summary.get("runs", [])
    out["cpu_seconds"] = sum(c.get("cpu_seconds", 0.0) for c in chains)
    out["chain_status"] = [c.get("status") for c in chains]
    for c in chains:
        for w in c.get("warnings", []):
            said.append(f"chain {c.get('chain_id')}: {w}")
    if said:
        flags.append(f"{len(said)} footer warning(s)")
    keys = sorted(set(untrusted_keys(summary)))
    if keys:
        n = sum(1 for c in chains if any(k in c.get("estimates", {}) and c["estimates"][k] for k in keys))
        flags.append(f"untrusted ({n} of {len(chains)} chains: {', '.join(keys)})")
        logz_flags.append("untrusted")
    lz = [c["estimates"].get("log_z") for c in chains if "log_z" in c.get("estimates", {})]
    out["chain_log_z"] = lz
    out["chain_log_z_se"] = [c["estimates"].get("log_z_se") for c in chains if "log_z" in c.get("estimates", {})]
if diagnose:
    for r in diagnose.get("runs", []):
        rh = r.get("max_rhat")
        out["pemc_max_rhat"] = rh
        if rh is None or (isinstance(rh, (int, float)) and rh > 1.01):
            flags.append(f"diagnose R-hat {rh if rh is None else round(rh, 3)}")
        trust = r.get("log_z_trust") or {}
        if trust.get("chains_disagree"):
            flags.append("log Z chains disagree")
            logz_flags.append("chains_disagree")
        if trust.get("n_untrusted") and "untrusted" not in logz_flags:
            flags.append(f"diagnose: {trust['n_untrusted']} chains untrusted")
            logz_flags.append("untrusted")
        keys = sorted(set(untrusted_keys(r)) - {"n_untrusted"})
        if keys and "untrusted" not in logz_flags:
            flags.append(f"diagnose untrusted keys: {', '.join(keys)}")
            logz_flags.append("untrusted")
        said += [f"diagnose: {w}" for w in r.get("warnings", [])]
        said += [f"note: {n}" for n in r.get("notes", [])][:5]
out["flags"], out["pemc_said"] = flags, said[:12]

# The checker's result.
if check:
    out["check"] = check["verdict"]
    out["reasons"] = check["reasons"]
    out["max_abs_z"], out["worst"], out["max_rhat"] = check["max_abs_z"], check["worst"], check["max_rhat"]
    m = check.get("modes")
    if m:
        out["modes_visited"], out["n_modes"], out["mode_max_abs_z"] = m["visited"], m["n_modes"], m["max_abs_z"]
    lz = check.get("log_z")
    if lz:
        out["log_z"] = dict(estimate=lz["estimate"], truth=lz["truth"], error=lz["estimate"] - lz["truth"],
                            se=lz["se"], z=lz["z"])

# The verdict.
if out["status"] != "ok":
    verdict = out["status"]
else:
    moments_wrong = any(not r.startswith("log Z") for r in out.get("reasons", []))
    logz_wrong = "log_z" in out and not abs(out["log_z"]["z"]) <= 4.5
    if moments_wrong and not flags:
        verdict = "WRONG AND TRUSTED"
    elif logz_wrong and not logz_flags:
        verdict = "WRONG AND TRUSTED (log Z)"
    elif moments_wrong or logz_wrong:
        verdict = "wrong, flagged"
    else:
        verdict = "pass (flagged)" if flags else "pass"
out["verdict"] = verdict
json.dump(out, open(os.path.join(cell, "cell.json"), "w"), indent=1, default=float)
z = f"{out['max_abs_z']:.2f} ({out['worst']})" if "max_abs_z" in out else "-"
print(f"{case} / {sampler}: {verdict}; max |z| {z}; CPU {out.get('cpu_seconds', float('nan')):.1f} s; "
      f"flags: {'; '.join(flags) or 'none'}" + (f"; {out['error']}" if out.get("error") else ""))
