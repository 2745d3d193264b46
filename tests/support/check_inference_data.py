#!/usr/bin/env python3
"""Checks a pemc-report netCDF export against ArviZ's InferenceData schema, reading it the way
arviz.from_netcdf does: the group names from netCDF4, every group with xarray.open_dataset(path,
group=g), the file's own attributes with xarray.open_dataset(path).

  check_inference_data.py FILE --form plain|resampled|weighted [--warmup] [--log-lik NAME]...
                          [--observed-data NAME]... [--version V] [--chains N] [--draws N]

Checks: exactly the expected groups (posterior, sample_stats, log_likelihood when --log-lik,
their warmup_ versions only with --warmup); created_at (ISO 8601, UTC), inference_library "pemc"
and inference_library_version on the file and every group; every variable's dims start with
(chain, draw); every dim has an integer coordinate (draw and named dims 0..n-1, chain distinct);
no dim called "sample" (az.extract creates it) and stacking chain and draw into one works; the
log-likelihood variables are in log_likelihood and not in posterior; matching chain and draw
across the groups of a phase; the weighted form has dim weighted_sample after draw and
sample_stats/log_weight (every draw with some finite weight), the others neither; the file's
pemc_draws attribute names the form. With --observed-data: group observed_data holds exactly
those variables, each over dims <name>_dim_0, ... (no chain or draw) with coordinates 0..n-1, with
ArviZ's attributes and pemc_data_file and pemc_data_sha256 (64 hex digits); without it there is
no such group. Exit 1 with the failed check on stderr.
"""
import argparse
import datetime
import sys

import netCDF4
import numpy as np
import xarray as xr


def fail(msg):
    sys.exit(f"check_inference_data: {msg}")


def check_attrs(where, attrs, version):
    for key in ("created_at", "inference_library", "inference_library_version"):
        if key not in attrs:
            fail(f"{where}: no attribute {key} (has {sorted(attrs)})")
    try:
        created = datetime.datetime.fromisoformat(str(attrs["created_at"]))
    except ValueError as e:
        fail(f"{where}: created_at {attrs['created_at']!r} is not ISO 8601: {e}")
    if created.utcoffset() != datetime.timedelta(0):
        fail(f"{where}: created_at {attrs['created_at']!r} is not in UTC")
    if attrs["inference_library"] != "pemc":
        fail(f"{where}: inference_library {attrs['inference_library']!r}")
    if version is not None and attrs["inference_library_version"] != version:
        fail(f"{where}: inference_library_version {attrs['inference_library_version']!r}, "
             f"expected {version!r}")


def check_group(path, group, args):
    ds = xr.open_dataset(path, group=group)
    where = f"{path} group {group}"
    check_attrs(where, ds.attrs, args.version)
    if not ds.data_vars:
        fail(f"{where}: no variables")
    for dim, size in ds.sizes.items():
        if dim == "sample":
            fail(f"{where}: dim 'sample' collides with the one az.extract creates")
        if dim not in ds.coords:
            fail(f"{where}: dim {dim} has no coordinate")
        values = ds.coords[dim].values
        if not np.issubdtype(values.dtype, np.integer):
            fail(f"{where}: coordinate {dim} is {values.dtype}, not integers")
        if dim == "chain":
            if len(set(values.tolist())) != size:
                fail(f"{where}: chain ids {values} are not distinct")
        elif not np.array_equal(values, np.arange(size)):
            fail(f"{where}: coordinate {dim} is not 0..{size - 1}")
    weighted = args.form == "weighted"
    for name, var in ds.data_vars.items():
        if var.dims[:2] != ("chain", "draw"):
            fail(f"{where}: {name} has dims {var.dims}, not (chain, draw, ...)")
        if ("weighted_sample" in var.dims) and not weighted:
            fail(f"{where}: {name} has dim weighted_sample in the {args.form} form")
        if weighted and group.endswith(("posterior", "log_likelihood")) and \
                var.dims[2:3] != ("weighted_sample",):
            fail(f"{where}: {name} has dims {var.dims}, expected weighted_sample after draw")
        if name == "diverging" and var.dtype != bool:
            fail(f"{where}: diverging is {var.dtype}, not bool")
    # az.extract stacks (chain, draw) into "sample": that must work.
    ds.stack(sample=("chain", "draw"))
    return ds


def check_observed_data(path, names, version):
    ds = xr.open_dataset(path, group="observed_data")
    where = f"{path} group observed_data"
    check_attrs(where, ds.attrs, version)
    if not str(ds.attrs.get("pemc_data_file", "")):
        fail(f"{where}: no attribute pemc_data_file")
    sha = str(ds.attrs.get("pemc_data_sha256", ""))
    if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
        fail(f"{where}: pemc_data_sha256 {sha!r} is not a SHA-256")
    if sorted(ds.data_vars) != sorted(names):
        fail(f"{where}: variables {sorted(ds.data_vars)}, expected {sorted(names)}")
    for name, var in ds.data_vars.items():
        want = tuple(f"{name}_dim_{k}" for k in range(var.ndim))
        if var.dims != want:
            fail(f"{where}: {name} has dims {var.dims}, expected {want}")
        for dim in var.dims:
            values = ds.coords[dim].values if dim in ds.coords else None
            if values is None or not np.issubdtype(values.dtype, np.integer) or \
                    not np.array_equal(values, np.arange(ds.sizes[dim])):
                fail(f"{where}: dim {dim} has no coordinate 0..{ds.sizes[dim] - 1}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("file")
    p.add_argument("--form", choices=["plain", "resampled", "weighted"], required=True)
    p.add_argument("--warmup", action="store_true")
    p.add_argument("--log-lik", action="append", default=[])
    p.add_argument("--observed-data", action="append", default=[])
    p.add_argument("--version")
    p.add_argument("--chains", type=int)
    p.add_argument("--draws", type=int)
    args = p.parse_args()
    path = args.file

    with netCDF4.Dataset(path, mode="r") as nc:
        groups = list(nc.groups)
    phases = ["", "warmup_"] if args.warmup else [""]
    names = ["posterior", "sample_stats"] + (["log_likelihood"] if args.log_lik else [])
    want = sorted([prefix + n for prefix in phases for n in names] +
                  (["observed_data"] if args.observed_data else []))
    if sorted(groups) != want:
        fail(f"{path}: groups {sorted(groups)}, expected {want}")
    root = xr.open_dataset(path).attrs
    check_attrs(f"{path} (file)", root, args.version)
    if not str(root.get("pemc_draws", "")).startswith(args.form):
        fail(f"{path}: pemc_draws {root.get('pemc_draws')!r}, expected the {args.form} form")

    for prefix in phases:
        data = {n: check_group(path, prefix + n, args) for n in names}
        sizes = {(n, d): data[n].sizes[d] for n in names for d in ("chain", "draw")}
        for d in ("chain", "draw"):
            if len({sizes[(n, d)] for n in names}) != 1:
                fail(f"{path}: {prefix} groups disagree on {d}: {sizes}")
            for n in names:
                if not np.array_equal(data[n].coords[d].values, data["posterior"].coords[d].values):
                    fail(f"{path}: {prefix}{n} has other {d} coordinates than {prefix}posterior")
        if not prefix:
            if args.chains is not None and sizes[("posterior", "chain")] != args.chains:
                fail(f"{path}: {sizes[('posterior', 'chain')]} chains, expected {args.chains}")
            if args.draws is not None and sizes[("posterior", "draw")] != args.draws:
                fail(f"{path}: {sizes[('posterior', 'draw')]} draws, expected {args.draws}")
        for name in args.log_lik:
            if name not in data["log_likelihood"]:
                fail(f"{path}: {name} not in {prefix}log_likelihood")
            if name in data["posterior"]:
                fail(f"{path}: {name} still in {prefix}posterior")
        stats = data["sample_stats"]
        if args.form == "weighted":
            if "log_weight" not in stats:
                fail(f"{path}: weighted form without {prefix}sample_stats/log_weight")
            lw = stats["log_weight"]
            if lw.dims != ("chain", "draw", "weighted_sample"):
                fail(f"{path}: log_weight dims {lw.dims}")
            w = lw.values
            if np.isnan(w).any() or not np.isfinite(w.max(axis=2)).all():
                fail(f"{path}: a draw of {prefix}sample_stats/log_weight has no finite weight")
        elif "log_weight" in stats:
            fail(f"{path}: log_weight in the {args.form} form")
    if args.observed_data:
        check_observed_data(path, args.observed_data, args.version)
    print(f"check_inference_data: {path}: {args.form}, groups {', '.join(want)}: ok")


if __name__ == "__main__":
    main()
