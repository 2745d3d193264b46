# Reference run of a label-switching case's ORDERED model with RStan (an implementation independent
# of pemc), for tests/statistical/multimodal/make_cases.py:
#   Rscript ordered_reference.R MODEL.stan DATA.R OUTDIR SEED WARMUP ITER
# DATA.R assigns the data variables (R syntax). Writes OUTDIR/draws.csv (chain, then the constrained
# parameters in Stan's names, every post-warmup draw of 4 chains) and OUTDIR/bridge.txt
# (log Z of the ordered model by bridge sampling, warp3 and normal, with their error measures).
suppressMessages({ library(rstan); library(bridgesampling) })
a <- commandArgs(trailingOnly = TRUE)
model <- a[1]; datafile <- a[2]; out <- a[3]
seed <- as.integer(a[4]); warmup <- as.integer(a[5]); iter <- as.integer(a[6])
env <- new.env(); sys.source(datafile, envir = env)
data <- as.list(env)
rstan_options(auto_write = FALSE)
# Debian's r-cran-bh is an empty metapackage: Boost is in /usr/include (as tests/bench/stan_vs_rstan.R).
boost <- system.file("include", package = "BH")
if (!nzchar(boost) || !dir.exists(file.path(boost, "boost"))) boost <- "/usr/include"
sm <- stan_model(model, boost_lib = boost)
fit <- sampling(sm, data = data, chains = 4, cores = 2, seed = seed, warmup = warmup,
                iter = warmup + iter, refresh = 0, control = list(adapt_delta = 0.95))
arr <- as.array(fit)                        # iterations x chains x parameters (lp__ last)
pars <- setdiff(dimnames(arr)[[3]], "lp__")
rows <- do.call(rbind, lapply(seq_len(dim(arr)[2]), function(c) cbind(chain = c, arr[, c, pars])))
write.csv(rows, file.path(out, "draws.csv"), row.names = FALSE, quote = FALSE)
sp <- get_sampler_params(fit, inc_warmup = FALSE)
ndiv <- sum(sapply(sp, function(x) sum(x[, "divergent__"])))
set.seed(seed)
w3 <- bridge_sampler(fit, method = "warp3", repetitions = 3, silent = TRUE)
nm <- bridge_sampler(fit, method = "normal", silent = TRUE)
em <- error_measures(nm)
s <- summary(fit)$summary
cat(sprintf("warp3 %.8f\nwarp3_rep_sd %.3g\nnormal %.8f\nnormal_cv %s\ndivergent %d\nmax_rhat %.5f\nmin_ess %.0f\n",
            mean(w3$logml), sd(w3$logml), nm$logml, em$cv, ndiv, max(s[, "Rhat"], na.rm = TRUE),
            min(s[, "n_eff"], na.rm = TRUE)), file = file.path(out, "bridge.txt"))
