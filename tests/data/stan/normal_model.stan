// A small model for pemc's Stan-target tests: every block, a lower bound (a Jacobian), a
// generated quantity drawn with an _rng, a rejection (a domain error), an exception that is not a
// domain error (an index out of range) and generated quantities that throw far out.
data {
  int<lower=0> N;
  vector[N] y;
}
parameters {
  real mu;
  real<lower=0> sigma;
}
transformed parameters {
  real log_sigma = log(sigma);
}
model {
  if (mu > 1e6) reject("mu is too large: ", mu);
  if (mu < -1e6) target += y[N + 1];  // an index out of range: an error of the model
  mu ~ normal(0, 10);
  sigma ~ lognormal(0, 1);
  y ~ normal(mu, sigma);
}
generated quantities {
  real y_rep = normal_rng(mu, sigma);
  if (mu > 1e5) reject("y_rep needs mu below 1e5, got ", mu);
}
