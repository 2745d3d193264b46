#!/usr/bin/python3
"""make_cases.py [--out DIR] [--only CASE,...] [--skip-stan-check] [--work DIR]

Writes pemc's own multimodal benchmark cases (issue 36, item 6) into tests/data/multimodal/, in the
format of ../shared/multimodal (<case>.stan in Stan 2.21 syntax with `target +=` only,
<case>.data.json in CmdStan JSON, <case>.truth.json with the fields and mode_rule types that
../shared/multimodal/check_multimodal.py reads). Same three families as the shared cases, other
K, d, dimensions, weights, covariances, separations and data, so that results can be checked on
cases the developers have not tuned to.

Truth (tests/data/multimodal/README.md says it per case):
  label switching      symmetric parts exactly; the rest from RStan on the ORDERED model
                       (ordered_reference.R), log Z by bridge sampling (R's bridgesampling), both
                       checked against importance sampling with this file's own numpy density
  squared observation  1-D quadrature per factor (scipy quad), checked by a dense trapezoid rule
  Gaussian mixture     closed forms; mode masses by 4e6 exact draws per component; checked
                       against 2e6 exact mixture draws
Every case's .stan is evaluated by RStan at random points and must equal this file's density (the
one the truth is computed from) to 1e-8, unless --skip-stan-check.
Seeds are fixed: re-running writes the same files (RStan's draws are reproducible for one
toolchain; the label-switching numbers move within their stated SEs on another).
Needs Debian's python3-numpy, python3-scipy, r-cran-rstan and r-cran-bridgesampling; about
10 CPU-minutes, most of it RStan.
"""
import argparse, itertools, json, math, os, subprocess, sys, tempfile
import numpy as np
from scipy import integrate, special, stats

REUSE = False   # --reuse: take the RStan reference runs already in --work
HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
SHARED = os.environ.get("PEMC_SHARED_DIR", os.path.join(SOURCE, "..", "shared"))
sys.path.insert(0, os.path.join(SHARED, "multimodal"))
from check_multimodal import ess_stan  # the checker's own ESS, so truth SEs mean what its MCSEs mean

# ------------------------------------------------------------------------------------------------
# Shared helpers


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


def write_r_data(path, data):
    """The data as R assignments (integers as 5L), for RStan: Debian has no R JSON reader here."""
    def r(v):
        if isinstance(v, bool):
            raise TypeError(v)
        if isinstance(v, int):
            return f"{v}L"
        if isinstance(v, float):
            return repr(v)
        a = np.asarray(v, float)
        if a.ndim == 1:
            return "c(" + ", ".join(repr(float(x)) for x in a) + ")"
        # an array of K vectors/matrices: R's array is column-major, dims as Stan's
        return f"array(c({', '.join(repr(float(x)) for x in a.flatten(order='F'))}), dim = c({', '.join(map(str, a.shape))}))"
    with open(path, "w") as f:
        for k, v in data.items():
            f.write(f"{k} <- {r(v)}\n")


def rscript(*args):
    subprocess.run(["Rscript", *map(str, args)], check=True)


def stan_check(name, stan_code, data, names, points, logdens, work):
    """RStan's log_prob of the written model at `points` must equal our density there."""
    d = os.path.join(work, name + "_check")
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "m.stan"), "w").write(stan_code)
    write_r_data(os.path.join(d, "data.R"), data)
    np.savetxt(os.path.join(d, "points.csv"), points, delimiter=",", header=",".join(names), comments="")
    rscript(os.path.join(HERE, "logprob_check.R"), os.path.join(d, "m.stan"), os.path.join(d, "data.R"),
            os.path.join(d, "points.csv"), os.path.join(d, "lp.txt"))
    stan_lp = np.loadtxt(os.path.join(d, "lp.txt"))
    ours = logdens(points)
    err = np.max(np.abs(stan_lp - ours))
    print(f"  {name}: RStan log_prob vs ours at {len(points)} points: max abs diff {err:.2e}")
    if not err < 1e-8 * max(1.0, np.max(np.abs(ours))):
        raise SystemExit(f"{name}: the .stan file and the truth's density disagree ({err})")


def truth_record(case, family, dims, mean, m2, mean_se, m2_se, log_z, log_z_se, convention, modes, rule,
                 how, extra):
    return dict(case=case, family=family, dims=dims,
                mean=dict(zip(dims, map(float, mean))), second_moment=dict(zip(dims, map(float, m2))),
                mean_se=dict(zip(dims, map(float, mean_se))), second_moment_se=dict(zip(dims, map(float, m2_se))),
                variance={d: float(b - a * a) for d, a, b in zip(dims, mean, m2)},
                log_z=None if log_z is None else float(log_z),
                log_z_se=None if log_z_se is None else float(log_z_se),
                log_z_convention=convention, modes=modes, mode_rule=rule, how=how, extra=extra)


def save_case(out, name, stan_code, data, truth):
    open(os.path.join(out, name + ".stan"), "w").write(stan_code)
    if data is not None:
        write_json(os.path.join(out, name + ".data.json"), data)
    write_json(os.path.join(out, name + ".truth.json"), truth)
    print(f"wrote {name}: log Z {truth['log_z']} (SE {truth['log_z_se']})")


def agree(label, a, b, se, limit=4.5):
    """Two methods agree within `limit` combined SEs (or to 1e-9 relative when both are exact)."""
    if abs(a - b) <= 1e-12 * max(1, abs(a)):   # equal to rounding (e.g. a mean that is exact by symmetry)
        z = 0.0
    else:
        z = (a - b) / se if se > 0 else (0.0 if abs(a - b) <= 1e-9 * max(1, abs(a)) else math.inf)
    print(f"    {label}: {a:.6f} vs {b:.6f}  z = {z:.2f}")
    if not abs(z) <= limit:
        raise SystemExit(f"second method disagrees on {label}")
    return z


# ------------------------------------------------------------------------------------------------
# Family 1: label switching. K-component normal mixture, exchangeable priors, K! equal-mass modes.

MIX_STAN = """// Family 1 (label switching), case {name}: a K-component normal mixture with unknown locations mu,
// weights theta and a common sd sigma, exchangeable priors; every normalising constant is kept
// (target += only), so log Z = log p(y) whatever propto is. The posterior is invariant under any
// permutation of the labels (mu, theta jointly): K! label-switched modes of exactly equal mass.
// Written by tests/statistical/multimodal/make_cases.py.
data {{
  int<lower=1> N;
  int<lower=2> K;
  real y[N];
  real<lower=0> mu_sd;     // prior sd of each location (mean 0)
  real<lower=0> alpha;     // symmetric Dirichlet concentration of the weights
  real<lower=0> sigma_sd;  // scale of sigma's half-normal prior
}}
parameters {{
  {mu_decl} mu;
  simplex[K] theta;
  real<lower=0> sigma;
}}
model {{
  vector[K] log_theta = log(theta);
  target += normal_lpdf(mu | 0, mu_sd);
  target += dirichlet_lpdf(theta | rep_vector(alpha, K));
  target += normal_lpdf(sigma | 0, sigma_sd) - normal_lccdf(0 | 0, sigma_sd);  // half-normal, normalised
  for (n in 1:N) {{
    vector[K] lp = log_theta;
    for (k in 1:K)
      lp[k] += normal_lpdf(y[n] | mu[k], sigma);
    target += log_sum_exp(lp);
  }}
}}
"""
MIX_GQ = """generated quantities {
  vector[K] mu_sorted = sort_asc(mu);  // the identifiable summary: invariant to the labels
}
"""


def mix_logdens(data, mu, theta, sigma):
    """log of the model's target (constrained scale, no Jacobian); rows of mu, theta: points."""
    y = np.asarray(data["y"])
    K = data["K"]
    a = data["alpha"]
    lp = stats.norm.logpdf(mu, 0, data["mu_sd"]).sum(1)
    lp += special.gammaln(K * a) - K * special.gammaln(a) + (a - 1) * np.log(theta).sum(1)
    lp += stats.norm.logpdf(sigma, 0, data["sigma_sd"]) + math.log(2.0)
    comp = np.log(theta)[:, None, :] + stats.norm.logpdf(y[None, :, None], mu[:, None, :], sigma[:, None, None])
    return lp + special.logsumexp(comp, axis=2).sum(1)


def mix_to_u(mu, theta, sigma):
    """Our own unconstrained coordinates of the ORDERED model (not Stan's): mu_1, log gaps,
    additive log-ratios of theta against theta_K, log sigma."""
    return np.column_stack([mu[:, :1], np.log(np.diff(mu, axis=1)), np.log(theta[:, :-1] / theta[:, -1:]),
                            np.log(sigma)[:, None]])


def mix_from_u(u, K):
    """Inverse of mix_to_u with log |Jacobian|."""
    mu = np.cumsum(np.column_stack([u[:, :1], np.exp(u[:, 1:K])]), axis=1)
    c = np.column_stack([u[:, K:2 * K - 1], np.zeros(len(u))])
    theta = np.exp(c - special.logsumexp(c, axis=1, keepdims=True))
    sigma = np.exp(u[:, -1])
    logjac = u[:, 1:K].sum(1) + np.log(theta).sum(1) + u[:, -1]
    return mu, theta, sigma, logjac


def mix_quantities(mu, theta, sigma, K):
    """Per ordered draw, the symmetrised value g of every reported quantity: the average over the
    K! relabellings (mu, theta jointly), so that E_sym[q] = E_ord[g]. Returns names, g, g^2-part."""
    names, first, second = [], [], []
    for k in range(K):   # mu[k]: every label takes every sorted location equally often
        names.append(f"mu[{k + 1}]"); first.append(mu.mean(1)); second.append((mu ** 2).mean(1))
    for k in range(K):
        names.append(f"theta[{k + 1}]"); first.append(theta.mean(1)); second.append((theta ** 2).mean(1))
    names.append("sigma"); first.append(sigma); second.append(sigma ** 2)
    for k in range(K):   # sorted locations do not depend on the labels
        names.append(f"mu_sorted[{k + 1}]"); first.append(mu[:, k]); second.append(mu[:, k] ** 2)
    return names, first, second


def mix_case(name, out, work, K, N, true_mu, true_w, true_sigma, priors, seed, check):
    rng = np.random.default_rng(seed)
    z = rng.choice(K, size=N, p=true_w)
    y = np.round(rng.normal(np.asarray(true_mu)[z], true_sigma), 4)
    data = dict(N=N, K=K, y=[float(v) for v in y], **priors)
    sym = MIX_STAN.format(name=name, mu_decl="vector[K]") + MIX_GQ
    ordered = MIX_STAN.format(name=name + " (ordered reference)", mu_decl="ordered[K]")
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "ordered.stan"), "w").write(ordered)
    write_r_data(os.path.join(d, "data.R"), data)
    warmup, iters = 2000, 25000
    print(f"  {name}: RStan on the ordered model, 4 chains x {iters} after {warmup} warmup ...", flush=True)
    if not (REUSE and os.path.exists(os.path.join(d, "bridge.txt"))):
        rscript(os.path.join(HERE, "ordered_reference.R"), os.path.join(d, "ordered.stan"),
                os.path.join(d, "data.R"), d, seed, warmup, iters)
    raw = np.genfromtxt(os.path.join(d, "draws.csv"), delimiter=",", names=True)
    chain = raw["chain"].astype(int)
    mu = np.column_stack([raw[f"mu{k + 1}"] for k in range(K)])
    theta = np.column_stack([raw[f"theta{k + 1}"] for k in range(K)])
    sigma = raw["sigma"]
    bridge = dict(line.split() for line in open(os.path.join(d, "bridge.txt")))
    print(f"  {name}: RStan max R-hat {bridge['max_rhat']}, min ESS {bridge['min_ess']}, divergent {bridge['divergent']}")
    if float(bridge["max_rhat"]) > 1.01 or int(bridge["divergent"]) > 0:
        raise SystemExit(f"{name}: the ordered reference run did not converge cleanly")
    names, first, second = mix_quantities(mu, theta, sigma, K)

    def est(g):   # pooled mean and its MCSE over the 4 chains (the checker's ESS)
        per = [g[chain == c] for c in range(1, 5)]
        sd = g.std(ddof=1)
        return g.mean(), (sd / math.sqrt(ess_stan(per)) if sd > 1e-12 * max(1, abs(g.mean())) else 0.0)
    m1 = [est(g) for g in first]
    m2 = [est(g) for g in second]
    for i, n in enumerate(names):   # exact by symmetry: each weight's mean is 1/K
        if n.startswith("theta"):
            m1[i] = (1.0 / K, 0.0)

    # Second method: importance sampling with our own numpy density in our own coordinates, from a
    # multivariate t(5) fitted to the RStan draws (independent of Stan's code and of bridge sampling).
    u = mix_to_u(mu, theta, sigma)
    loc, cov = u.mean(0), np.cov(u.T) * 1.5
    prop = stats.multivariate_t(loc=loc, shape=cov, df=5, seed=seed + 1)
    M = 400_000
    lw, g1, g2 = [], [], []
    for _ in range(M // 20_000):
        uu = prop.rvs(20_000)
        pm, pt, ps, lj = mix_from_u(uu, K)
        lw.append(mix_logdens(data, pm, pt, ps) + lj - prop.logpdf(uu))
        _, a1, a2 = mix_quantities(pm, pt, ps, K)
        g1.append(np.array(a1)); g2.append(np.array(a2))
    lw = np.concatenate(lw)
    g1, g2 = np.concatenate(g1, axis=1), np.concatenate(g2, axis=1)
    w = np.exp(lw - lw.max())
    log_z_is_ord = lw.max() + math.log(w.mean())
    log_z_is_se = w.std(ddof=1) / math.sqrt(M) / w.mean()
    kish = w.sum() ** 2 / (w ** 2).sum()
    print(f"  {name}: IS Kish ESS {kish:.0f} of {M}")
    log_kfact = math.lgamma(K + 1)
    log_z_bridge_ord = float(bridge["warp3"])
    bridge_sd = max(float(bridge["warp3_rep_sd"]), abs(float(bridge["warp3"]) - float(bridge["normal"])))
    log_z_se = max(log_z_is_se, bridge_sd, abs(log_z_bridge_ord - log_z_is_ord))
    agree("log Z ordered, bridge (warp3) vs IS", log_z_bridge_ord, log_z_is_ord, math.hypot(log_z_is_se, bridge_sd) or 1e-12)
    ws = w / w.sum()
    checks = {}
    for i, n in enumerate(names):
        for kind, g, (e, s) in (("mean", g1[i], m1[i]), ("E[x^2]", g2[i], m2[i])):
            v = (ws * g).sum()
            se_is = math.sqrt((ws ** 2 * (g - v) ** 2).sum())
            checks[f"{kind} {n}"] = round(agree(f"{kind} {n}, RStan vs IS", e, v, math.hypot(s, se_is) or 1e-12), 2)

    rule = dict(type="order", vars=[f"mu[{k + 1}]" for k in range(K)], label="mu", n_modes=math.factorial(K),
                mass_each=1.0 / math.factorial(K))
    how = (f"exact by symmetry: E[theta[k]] = 1/K, every mode's mass 1/K! = {1 / math.factorial(K):.6g}. "
           f"Everything else from RStan 2.21 on the ordered model (ordered[K] mu; generator "
           f"tests/statistical/multimodal/make_cases.py), 4 chains x {iters} draws after {warmup} warmup, "
           f"adapt_delta 0.95, seed {seed}: per ordered draw the average of each quantity over the K! "
           f"relabellings, pooled; *_se are the MCSEs (the checker's pooled ESS). log Z = log Z_ordered + "
           f"log K! with log Z_ordered by bridge sampling (R bridgesampling, warp3, 3 repetitions) = "
           f"{log_z_bridge_ord:.4f}, checked by importance sampling with our own numpy density, a "
           f"t(5) proposal fitted to the ordered draws, {M} draws = {log_z_is_ord:.4f} +- {log_z_is_se:.4f}; "
           f"log_z_se = the largest of the IS SE, the bridge spread and their difference. Every moment "
           f"agrees with the IS estimate (|z| <= 4.5; extra.is_check_z).")
    dims = names
    truth = truth_record(name, "label_switching", dims, [a for a, _ in m1], [a for a, _ in m2],
                         [s for _, s in m1], [s for _, s in m2], log_z_bridge_ord + log_kfact, log_z_se,
                         "log p(y): the model uses target += with every normalising constant (half-normal "
                         "normalised), so propto does not change it",
                         f"{math.factorial(K)} label-permuted modes of exactly equal mass 1/{math.factorial(K)} "
                         f"(one per ordering of the component locations)", rule, how,
                         dict(true_mu=list(true_mu), true_weights=list(true_w), true_sigma=true_sigma,
                              data_seed=seed, log_z_ordered_bridge_warp3=log_z_bridge_ord,
                              log_z_ordered_bridge_normal=float(bridge["normal"]),
                              log_z_ordered_is=log_z_is_ord, log_z_ordered_is_se=log_z_is_se,
                              is_kish_ess=kish, log_k_factorial=log_kfact,
                              rstan=dict(max_rhat=float(bridge["max_rhat"]), min_ess=float(bridge["min_ess"]),
                                         divergent=int(bridge["divergent"])),
                              is_check_z=checks))
    if check:
        r = np.random.default_rng(seed + 2)
        P = 20
        pm = r.normal(0, 3, (P, K)); pt = r.dirichlet(np.ones(K), P); ps = r.uniform(0.3, 3, P)
        stan_check(name, sym, data, [f"mu[{k+1}]" for k in range(K)] + [f"theta[{k+1}]" for k in range(K)] + ["sigma"],
                   np.column_stack([pm, pt, ps]), lambda p: mix_logdens(data, p[:, :K], p[:, K:2 * K], p[:, -1]), work)
    save_case(out, name, sym, data, truth)


# ------------------------------------------------------------------------------------------------
# Family 2: squared observation. x[k] ~ N(0, 1), y[k] ~ N(x[k]^2, s): 2^d equal-mass modes.

SQOBS_STAN = """// Family 2 (squared observation), case {name}: x[k] ~ normal(0, 1), y[k] ~ normal(x[k]^2, s),
// k = 1..d. The posterior factorises over k; each factor is symmetric bimodal in x[k] (modes near
// +-sqrt(y[k])), so there are 2^d modes of equal mass. target += only: log Z = log p(y) whatever
// propto is. Written by tests/statistical/multimodal/make_cases.py.
data {{
  int<lower=1> d;
  real<lower=0> s;
  real<lower=0> y[d];
}}
parameters {{
  vector[d] x;
}}
model {{
  target += normal_lpdf(x | 0, 1);
  for (k in 1:d)
    target += normal_lpdf(y[k] | square(x[k]), s);
}}
"""


def sqobs_case(name, out, work, d, s, y, check):
    y = [float(v) for v in y]
    f = lambda x, yk, p: x ** p * stats.norm.pdf(x) * stats.norm.pdf(yk, x * x, s)
    Z, m2, m4, zt, m2t = [], [], [], [], []
    grid = np.linspace(-15, 15, 600_001)   # second method: trapezoid rule (spectral for smooth tails)
    for yk in y:
        mode = math.sqrt(max(yk - s * s / 2, 0.0))   # the factor's maximum on x > 0
        q = lambda p: 2 * sum(integrate.quad(f, a, b, args=(yk, p), epsabs=0, epsrel=1e-13, limit=400)[0]
                              for a, b in ((0, mode), (mode, mode + 1), (mode + 1, np.inf)))
        Z.append(q(0)); m2.append(q(2) / Z[-1]); m4.append(q(4) / Z[-1])
        zt.append(np.trapz(f(grid, yk, 0), grid)); m2t.append(np.trapz(f(grid, yk, 2), grid) / zt[-1])
        agree(f"y={yk}: Z_k quad vs trapezoid", Z[-1], zt[-1], 0)
        agree(f"y={yk}: E[x^2] quad vs trapezoid", m2[-1], m2t[-1], 0)
    dims = [f"x[{k + 1}]" for k in range(d)]
    log_z = float(np.sum(np.log(Z)))
    data = dict(d=d, s=float(s), y=y)
    stan = SQOBS_STAN.format(name=name)
    if check:
        pts = np.random.default_rng(7).normal(0, 1.5, (20, d))
        stan_check(name, stan, data, dims, pts,
                   lambda p: (stats.norm.logpdf(p) + stats.norm.logpdf(np.array(y), p * p, s)).sum(1), work)
    how = (f"E[x[k]] = 0 and every mode's mass = 2^-d exactly by the symmetry x[k] -> -x[k]; per factor, "
           f"Z_k = int N(x|0,1) N(y_k|x^2,s) dx and E[x_k^2] by scipy.integrate.quad (epsrel 1e-13, even "
           f"integrand, split at the mode), checked against the trapezoid rule on [-15,15] with 6e5 points "
           f"(relative agreement <= 1e-9); log Z = sum_k log Z_k.")
    truth = truth_record(name, "squared_observation", dims, [0.0] * d, m2, [0.0] * d, [0.0] * d, log_z, 0.0,
                         "log of the integral of exp(target) over the parameters = log p(y); the model uses "
                         "target += only, so propto does not change it",
                         f"2^{d} = {2 ** d} modes, one per sign pattern of x (near x[k] = +-sqrt(y[k]) shrunk "
                         f"by the prior), all of equal mass 1/{2 ** d} by symmetry",
                         dict(type="sign", vars=dims, n_modes=2 ** d, mass_each=2.0 ** -d), how,
                         dict(E_x4=dict(zip(dims, m4)), y=y, s=s, log_z_trapezoid=float(np.sum(np.log(zt)))))
    save_case(out, name, stan, data, truth)


# ------------------------------------------------------------------------------------------------
# Family 3: Gaussian mixtures with unequal weights and covariances.

GMIX_STAN = """// Family 3 (Gaussian mixture), case {name}: x ~ sum_k w_k N(m_k, L_k L_k'), written with
// log_sum_exp over normalised components, plus a constant `offset` (a log density far from 0 at
// the modes, as a model with data has): log Z = offset exactly. No sampling statements.
// Written by tests/statistical/multimodal/make_cases.py.
data {{
  int<lower=1> D;
  int<lower=1> K;
  simplex[K] w;
  vector[D] m[K];
  cholesky_factor_cov[D] L[K];
  real offset;
}}
transformed data {{
  vector[K] log_w = log(w);
}}
parameters {{
  vector[D] x;
}}
model {{
  vector[K] lp;
  for (k in 1:K)
    lp[k] = log_w[k] + multi_normal_cholesky_lpdf(x | m[k], L[k]);
  target += log_sum_exp(lp) + offset;
}}
"""


def gmix_case(name, out, work, w, means, covs, offset, seed, note, check):
    w, means, covs = np.asarray(w, float), np.asarray(means, float), np.asarray(covs, float)
    K, D = means.shape
    L = np.linalg.cholesky(covs)
    dims = [f"x[{i + 1}]" for i in range(D)]
    mean = w @ means
    m2 = np.array([sum(w[k] * (means[k, i] ** 2 + covs[k, i, i]) for k in range(K)) for i in range(D)])
    rng = np.random.default_rng(seed)
    # Mode masses for the checker's nearest-mean rule: the mass of each mean's Voronoi cell, from
    # 4e6 exact draws per component (SE <= 1e-4 absolute, far below any run's MCSE).
    n = 4_000_000
    frac = np.zeros((K, K))
    for k in range(K):
        for _ in range(n // 500_000):
            x = means[k] + rng.standard_normal((500_000, D)) @ L[k].T
            near = ((x[:, None, :] - means[None]) ** 2).sum(-1).argmin(1)
            frac[k] += np.bincount(near, minlength=K)
    frac /= n
    mass = w @ frac
    mass_se = float(np.sqrt((w[:, None] ** 2 * frac * (1 - frac) / n).sum(0)).max())
    # Second method: 2e6 exact mixture draws against the closed forms.
    comp = rng.choice(K, size=2_000_000, p=w)
    x = means[comp] + np.einsum("nij,nj->ni", L[comp], rng.standard_normal((len(comp), D)))
    for i in range(D):
        agree(f"E[{dims[i]}] closed form vs draws", mean[i], x[:, i].mean(), x[:, i].std() / math.sqrt(len(x)))
        agree(f"E[{dims[i]}^2] closed form vs draws", m2[i], (x[:, i] ** 2).mean(), (x[:, i] ** 2).std() / math.sqrt(len(x)))
    data = dict(D=D, K=K, w=[float(v) for v in w], m=means.tolist(), L=L.tolist(), offset=float(offset))
    stan = GMIX_STAN.format(name=name)

    def logdens(p):
        return special.logsumexp([math.log(w[k]) + stats.multivariate_normal.logpdf(p, means[k], covs[k])
                                  for k in range(K)], axis=0) + offset
    if check:
        pts = means[np.arange(20) % K] + np.random.default_rng(seed + 1).normal(0, 2, (20, D))
        stan_check(name, stan, data, dims, pts, logdens, work)
    dist = [float(np.linalg.norm(means[a] - means[b])) for a, b in itertools.combinations(range(K), 2)]
    how = (f"closed form: E[x] = sum_k w_k m_k, E[x_i^2] = sum_k w_k (m_ki^2 + Sigma_k,ii), log Z = offset "
           f"(normalised components); checked against 2e6 exact i.i.d. mixture draws. Mode masses (nearest-mean "
           f"rule) from 4e6 exact draws per component (SE <= {mass_se:.1e}).")
    rule = dict(type="nearest", vars=dims, centers=means.tolist(), weights=w.tolist(), mass=mass.tolist(),
                note="mass = probability of each mean's nearest-mean (Voronoi) region, from exact draws; "
                     "= weight up to leakage between components")
    truth = truth_record(name, "gaussian_mixture", dims, mean, m2, [0.0] * D, [0.0] * D, offset, 0.0,
                         "log of the integral of exp(target): normalised components plus the constant offset, so "
                         "log Z = offset", f"{K} Gaussian components with weights {w.tolist()}, unequal "
                         f"covariances; {note}; pairwise mean distances {[round(v, 2) for v in dist]}",
                         rule, how, dict(weights=w.tolist(), centers=means.tolist(), covariances=covs.tolist(),
                                         offset=offset, mass_se=mass_se, leak=frac.tolist()))
    save_case(out, name, stan, data, truth)


def rotated_cov(rng, eig):
    q = stats.special_ortho_group.rvs(len(eig), random_state=rng)
    return q @ np.diag(eig) @ q.T


# ------------------------------------------------------------------------------------------------
# The cases. Designs are fixed here, by rule (other K, d, weights, separations than the shared
# cases), never chosen from a sampler's output.

def cases(out, work, check):
    yield "mix3", lambda: mix_case(
        "mix3", out, work, K=3, N=150, true_mu=(-4.0, 0.0, 3.5), true_w=(0.3, 0.45, 0.25), true_sigma=1.0,
        priors=dict(mu_sd=5.0, alpha=2.0, sigma_sd=2.0), seed=3601, check=check)
    yield "mix2_near", lambda: mix_case(   # closer components, fewer data: lower barriers than mix2
        "mix2_near", out, work, K=2, N=100, true_mu=(-1.2, 1.6), true_w=(0.4, 0.6), true_sigma=0.8,
        priors=dict(mu_sd=3.0, alpha=3.0, sigma_sd=1.5), seed=3602, check=check)
    rng = np.random.default_rng(3603)
    yield "sqobs_d3", lambda: sqobs_case("sqobs_d3", out, work, 3, 0.4, np.round(rng.uniform(0.8, 3.5, 3), 2), check)
    rng6 = np.random.default_rng(3604)
    yield "sqobs_d6", lambda: sqobs_case("sqobs_d6", out, work, 6, 0.35, np.round(rng6.uniform(0.8, 3.5, 6), 2), check)
    r = np.random.default_rng(3605)
    yield "gmix_d3_k4", lambda: gmix_case(   # diagonal covariances, sds 0.5-1.5, tetrahedron of means
        "gmix_d3_k4", out, work, [0.4, 0.3, 0.2, 0.1],
        4.0 * np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]], float),
        [np.diag(r.uniform(0.5, 1.5, 3) ** 2) for _ in range(4)], 0.0, 3605, "diagonal covariances", check)
    r5 = np.random.default_rng(3606)
    yield "gmix_d5_k3", lambda: gmix_case(   # correlated covariances, log density offset -300
        "gmix_d5_k3", out, work, [0.5, 0.35, 0.15],
        [[4, 0, 0, 2, -2], [-4, 0, 2, -2, 0], [0, 6, -2, 0, 3]],
        [rotated_cov(r5, r5.uniform(0.3, 2.0, 5)) for _ in range(3)], -300.0, 3606,
        "correlated covariances (random rotations, eigenvalues 0.3-2.0), offset -300", check)
    yield "gmix_d4_k3_far", lambda: gmix_case(   # a 3 % component 18-22 away from the other two
        "gmix_d4_k3_far", out, work, [0.6, 0.37, 0.03],
        [[-3, 0, 0, 0], [4, 2, 0, 0], [10, 14, -8, 6]],
        [np.diag(np.square(v)) for v in ([1.0, 0.8, 1.2, 1.0], [0.6, 0.9, 0.7, 1.3], [0.5, 0.5, 0.8, 0.6])],
        0.0, 3607, "a low-weight (0.03) component far from the others", check)


README_HEAD = """# pemc's own multimodal cases (issue 36)

Unseen cases of the three families of `../shared/multimodal` (label switching, squared observation,
Gaussian mixtures), for checking that the samplers find every mode with the right mass on cases the
developers did not tune to. Same format, same checker:

```bash
build/pemc-report export RUN.pemc --format cmdstan --output-dir draws/   # --resample --config RUN.pbtxt for weighted samplers
../shared/multimodal/check_multimodal.py tests/data/multimodal/CASE.truth.json draws/*.csv [--log-z EST --log-z-se SE]
```

Every file here is written by `tests/statistical/multimodal/make_cases.py` (fixed seeds; designs fixed
in its `cases()` by rule, never chosen from a sampler's output; about 10 CPU-minutes; needs Debian's
python3-numpy, python3-scipy, r-cran-rstan and r-cran-bridgesampling). Before it writes a case, RStan
evaluates the case's `.stan` file at 20 random points and must agree with the numpy density the truth
is computed from (to 1e-8). `tests/statistical/multimodal_study.sh` runs every sampler on every case.

How the truth was computed, by family:

- **Label switching** (`mix3`: K = 3, 6 modes; `mix2_near`: K = 2, closer components, fewer data,
  other priors): exact by symmetry: E[theta[k]] = 1/K and every mode's mass 1/K! (the checker's
  `order` rule). Everything else from RStan 2.21 on the *ordered* model (`ordered[K] mu`, the same
  density restricted to one labelling: the symmetric posterior is its K! relabellings), 4 chains x
  25,000 draws after 2,000 warmup (adapt_delta 0.95; R-hat <= 1.01 and no divergences required):
  each quantity averaged per draw over the K! relabellings, the SE its MCSE (the checker's ESS).
  `mu_sorted` (the sorted locations, label-free) is the ordered model's mu. log Z = log Z_ordered +
  log K!, log Z_ordered by bridge sampling (R's bridgesampling, warp3, 3 repetitions; normal as a
  check). Second method for all of it: importance sampling with the generator's own numpy density in
  its own coordinates (not Stan's), 4e5 draws from a t(5) fitted to the ordered draws; every moment
  and log Z agree within 4.5 combined SEs (the z's are in the truth's `extra.is_check_z`).
  log_z_se = the largest of the IS SE, the bridge spread and the bridge-IS difference.
- **Squared observation** (`sqobs_d3`: 8 modes; `sqobs_d6`: 64 modes; other y and s, y drawn
  uniform on (0.8, 3.5) with a fixed seed): E[x[k]] = 0 and every mode's mass 2^-d exactly by
  symmetry; per factor Z_k and E[x_k^2] by scipy's adaptive quadrature (epsrel 1e-13), checked
  against the trapezoid rule on [-15, 15] with 6e5 points (relative agreement 1e-9); log Z = sum of
  log Z_k. Exact (SE 0).
- **Gaussian mixtures** (`gmix_d3_k4`: diagonal unequal covariances; `gmix_d5_k3`: correlated unequal
  covariances and a log density offset of -300; `gmix_d4_k3_far`: a 3 % component 18-22 units from
  the other two): E[x], E[x^2] and log Z (= the offset) in closed form, checked against 2e6 exact
  mixture draws. Mode masses (nearest-mean rule) from 4e6 exact draws per component (SE <= 1e-4,
  in `extra.mass_se`; the leakage between components is in `extra.leak`).

| case | family | dims | modes | log Z (SE) | design |
|---|---|---|---|---|---|
"""


def write_readme(out):
    rows = []
    for f in sorted(os.listdir(out)):
        if f.endswith(".truth.json"):
            t = json.load(open(os.path.join(out, f)))
            lz = "null" if t["log_z"] is None else f"{t['log_z']:.4f} ({t['log_z_se']:.2g})"
            rows.append(f"| {t['case']} | {t['family']} | {len(t['dims'])} | "
                        f"{t['mode_rule'].get('n_modes', len(t['mode_rule'].get('centers', [])))} | {lz} | "
                        f"{t['modes']} |")
    open(os.path.join(out, "README.md"), "w").write(README_HEAD + "\n".join(rows) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(SOURCE, "tests", "data", "multimodal"))
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--skip-stan-check", action="store_true")
    ap.add_argument("--work", default=None, help="keep the RStan runs here (default: a temporary directory)")
    ap.add_argument("--reuse", action="store_true", help="reuse the RStan runs already in --work")
    a = ap.parse_args()
    global REUSE
    REUSE = a.reuse
    os.makedirs(a.out, exist_ok=True)
    only = set(filter(None, a.only.split(",")))
    with tempfile.TemporaryDirectory() as tmp:
        work = a.work or tmp
        for name, make in cases(a.out, work, not a.skip_stan_check):
            if not only or name in only:
                print(f"== {name}", flush=True)
                make()
    write_readme(a.out)


if __name__ == "__main__":
    main()
