// Family 3 (Gaussian mixture), case gmix_d3_k4: x ~ sum_k w_k N(m_k, L_k L_k'), written with
// log_sum_exp over normalised components, plus a constant `offset` (a log density far from 0 at
// the modes, as a model with data has): log Z = offset exactly. No sampling statements.
// Written by tests/statistical/multimodal/make_cases.py.
data {
  int<lower=1> D;
  int<lower=1> K;
  simplex[K] w;
  vector[D] m[K];
  cholesky_factor_cov[D] L[K];
  real offset;
}
transformed data {
  vector[K] log_w = log(w);
}
parameters {
  vector[D] x;
}
model {
  vector[K] lp;
  for (k in 1:K)
    lp[k] = log_w[k] + multi_normal_cholesky_lpdf(x | m[k], L[k]);
  target += log_sum_exp(lp) + offset;
}
