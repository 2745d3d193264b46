// Family 1 (label switching), case mix2_near: a K-component normal mixture with unknown locations mu,
// weights theta and a common sd sigma, exchangeable priors; every normalising constant is kept
// (target += only), so log Z = log p(y) whatever propto is. The posterior is invariant under any
// permutation of the labels (mu, theta jointly): K! label-switched modes of exactly equal mass.
// Written by tests/statistical/multimodal/make_cases.py.
data {
  int<lower=1> N;
  int<lower=2> K;
  real y[N];
  real<lower=0> mu_sd;     // prior sd of each location (mean 0)
  real<lower=0> alpha;     // symmetric Dirichlet concentration of the weights
  real<lower=0> sigma_sd;  // scale of sigma's half-normal prior
}
parameters {
  vector[K] mu;
  simplex[K] theta;
  real<lower=0> sigma;
}
model {
  vector[K] log_theta = log(theta);
  target += normal_lpdf(mu | 0, mu_sd);
  target += dirichlet_lpdf(theta | rep_vector(alpha, K));
  target += normal_lpdf(sigma | 0, sigma_sd) - normal_lccdf(0 | 0, sigma_sd);  // half-normal, normalised
  for (n in 1:N) {
    vector[K] lp = log_theta;
    for (k in 1:K)
      lp[k] += normal_lpdf(y[n] | mu[k], sigma);
    target += log_sum_exp(lp);
  }
}
generated quantities {
  vector[K] mu_sorted = sort_asc(mu);  // the identifiable summary: invariant to the labels
}
