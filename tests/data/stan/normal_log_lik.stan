// A small model with pointwise log-likelihoods, for the ArviZ export (pemc-report export --format
// netcdf): log_lik[n] in generated quantities is what az.loo / az.waic read from the
// log_likelihood group; y_rep stays in the posterior.
data {
  int<lower=1> N;
  vector[N] y;
}
parameters {
  real mu;
  real<lower=0> sigma;
}
model {
  mu ~ normal(0, 10);
  sigma ~ lognormal(0, 1);
  y ~ normal(mu, sigma);
}
generated quantities {
  real y_rep = normal_rng(mu, sigma);
  vector[N] log_lik;
  for (n in 1:N) log_lik[n] = normal_lpdf(y[n] | mu, sigma);
}
