// A harmonic oscillator observed with noise (data: ode_oscillator.json, omega = 1, sigma = 0.1):
// y'' = -omega^2 y, y(0) = 1, y'(0) = 0, so y(t) = cos(omega t). The rk45 solver may take 200
// steps: for omega above about 4 it throws std::runtime_error ("Max number of iterations
// exceeded"), which Stan's samplers treat as a rejected proposal; random initial points in
// (-2, 2) and early warmup's long trajectories reach there. Its generated quantities fail for
// about 1 draw in 20 (reject), which leaves the draw's parameters as they are.
functions {
  real[] oscillator(real t, real[] y, real[] theta, real[] x_r, int[] x_i) {
    real dydt[2];
    dydt[1] = y[2];
    dydt[2] = -square(theta[1]) * y[1];
    return dydt;
  }
}
data {
  int<lower=1> N;
  real ts[N];
  real y_obs[N];
}
transformed data {
  real x_r[0];
  int x_i[0];
}
parameters {
  real log_omega;
  real<lower=0> sigma;
}
model {
  real y_hat[N, 2] = integrate_ode_rk45(oscillator, {1.0, 0.0}, 0.0, ts, {exp(log_omega)},
                                        x_r, x_i, 1e-6, 1e-6, 200);
  log_omega ~ normal(0, 1);
  sigma ~ normal(0, 1);
  y_obs ~ normal(y_hat[:, 1], sigma);
}
generated quantities {
  real omega = exp(log_omega);
  if (uniform_rng(0, 1) < 0.05) reject("a generated quantity failed (1 draw in 20)");
}
