// Two well-separated Gaussian modes in d dimensions, with weights w and 1 - w: plain NUTS stays in
// the mode it starts in; pseudo-extended NUTS visits both with the right weights (E[x_i] =
// w m + (1 - w) (-m) = (2 w - 1) m).
data {
  int<lower=1> d;
  real<lower=0, upper=1> w;
  real m;
}
parameters {
  vector[d] x;
}
model {
  target += log_mix(w, normal_lpdf(x | m, 1), normal_lpdf(x | -m, 1));
}
generated quantities {
  int in_positive_mode = mean(x) > 0;
}
