parameters {
  real mu;
}
model {
  mu ~ normal(0, 1)
}
