// Family 2 (squared observation), case sqobs_d6: x[k] ~ normal(0, 1), y[k] ~ normal(x[k]^2, s),
// k = 1..d. The posterior factorises over k; each factor is symmetric bimodal in x[k] (modes near
// +-sqrt(y[k])), so there are 2^d modes of equal mass. target += only: log Z = log p(y) whatever
// propto is. Written by tests/statistical/multimodal/make_cases.py.
data {
  int<lower=1> d;
  real<lower=0> s;
  real<lower=0> y[d];
}
parameters {
  vector[d] x;
}
model {
  target += normal_lpdf(x | 0, 1);
  for (k in 1:d)
    target += normal_lpdf(y[k] | square(x[k]), s);
}
