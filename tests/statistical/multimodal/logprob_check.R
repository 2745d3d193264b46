# Evaluates a case's Stan model with RStan at given points, so that make_cases.py can check its own
# (numpy) log density, from which the truth is computed, against the .stan file it writes:
#   Rscript logprob_check.R MODEL.stan DATA.R POINTS.csv OUT.txt
# POINTS.csv: a header of Stan names (mu[1], ...), one constrained point per row. OUT.txt: one
# value per row, the model's target (every constant kept, no Jacobian).
suppressMessages(library(rstan))
a <- commandArgs(trailingOnly = TRUE)
env <- new.env(); sys.source(a[2], envir = env)
pts <- read.csv(a[3], check.names = FALSE)
# Debian's r-cran-bh is an empty metapackage: Boost is in /usr/include (as tests/bench/stan_vs_rstan.R).
boost <- system.file("include", package = "BH")
if (!nzchar(boost) || !dir.exists(file.path(boost, "boost"))) boost <- "/usr/include"
sm <- stan_model(a[1], boost_lib = boost)
fit <- sampling(sm, data = as.list(env), chains = 1, iter = 1, warmup = 0, refresh = 0,
                algorithm = "Fixed_param")
skeleton <- get_inits(fit)[[1]]
lp <- apply(as.matrix(pts), 1, function(r) {
  log_prob(fit, unconstrain_pars(fit, relist(r, skeleton)), adjust_transform = FALSE)
})
writeLines(sprintf("%.12g", lp), a[4])
