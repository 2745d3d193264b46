# One RStan NUTS run of a posteriordb posterior, for tests/bench/stan_vs_rstan.sh.
#
# Usage: Rscript stan_vs_rstan.R POSTERIORDB POSTERIOR DATA_JSON SEED MODEL_DIR [compile]
#   POSTERIORDB  the posteriordb folder (posteriors/, models/, ...)
#   POSTERIOR    e.g. eight_schools-eight_schools_noncentered
#   DATA_JSON    the unzipped CmdStan JSON data file
#   SEED         the seed of sampling()
#   MODEL_DIR    a writable folder: the .stan file is copied there and rstan caches its compiled
#                model beside it (auto_write), so compile time is paid once and never timed
#   compile      only compile (and cache) the model, print nothing
#
# Runs Stan's defaults (diagonal metric, adapt_delta 0.8, max treedepth 10, initial step 1) with
# 4 chains one after another on one core, 1000 warmup + 1000 kept iterations each, and prints one
# line: "rstan <min bulk ESS> <CPU s of sampling()> <sum of get_elapsed_time()> <name of the min>
# <gradient evaluations>".
# The ESS is posterior::ess_bulk of each quantity the posteriordb posterior lists in its
# "dimensions" (parameters and transformed parameters; the same set pemc-report reference uses).

suppressPackageStartupMessages({
  library(rstan)
  library(posterior)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 5) stop("usage: stan_vs_rstan.R POSTERIORDB POSTERIOR DATA_JSON SEED MODEL_DIR [compile]")
pdb <- args[1]; posterior_name <- args[2]; data_json <- args[3]
seed <- as.integer(args[4]); model_dir <- args[5]
compile_only <- length(args) >= 6 && args[6] == "compile"

info <- fromJSON(file.path(pdb, "posteriors", paste0(posterior_name, ".json")))
stan_src <- file.path(pdb, "models", paste0(info$model_name, ".stan"))
dir.create(model_dir, showWarnings = FALSE, recursive = TRUE)
stan_file <- file.path(model_dir, paste0(info$model_name, ".stan"))
# Copy only when the text differs, so the cached .rds (keyed by the file's time) stays valid.
if (!file.exists(stan_file) || !identical(readLines(stan_file), readLines(stan_src)))
  invisible(file.copy(stan_src, stan_file, overwrite = TRUE))

rstan_options(auto_write = TRUE)  # caches <model>.rds next to the .stan file
# Debian's r-cran-bh is an empty metapackage (Boost lives in /usr/include, from libboost-dev), so
# rstan's default boost_lib (BH's include folder) does not exist there: point it at the system's.
boost <- system.file("include", package = "BH")
if (!nzchar(boost) || !dir.exists(file.path(boost, "boost"))) boost <- "/usr/include"
model <- stan_model(file = stan_file, boost_lib = boost)
if (compile_only) quit(status = 0)

# CmdStan JSON: jsonlite turns a list of rows into a matrix (row-major, as CmdStan means it).
data <- read_json(data_json, simplifyVector = TRUE)

t0 <- proc.time()
fit <- sampling(model, data = data, chains = 4, cores = 1, iter = 2000, warmup = 1000,
                seed = seed, refresh = 0)
t <- proc.time() - t0
cpu <- unname(t[["user.self"]] + t[["sys.self"]])
elapsed <- sum(get_elapsed_time(fit))  # per chain warmup + sampling, seconds
# Gradient evaluations: one per leapfrog step, warmup included (Stan's step-size search at the
# start adds a handful, not counted), to compare the cost of one gradient with pemc's.
n_grad <- sum(vapply(get_sampler_params(fit, inc_warmup = TRUE),
                     function(p) sum(p[, "n_leapfrog__"]), numeric(1)))

# Quantities: the posterior's "dimensions" names (theta -> theta[1], ..., theta[8]).
draws <- as.array(fit)  # iterations x chains x quantities, kept draws only
base <- sub("\\[.*$", "", dimnames(draws)[[3]])
keep <- base %in% names(info$dimensions)
ess <- vapply(which(keep), function(j) ess_bulk(draws[, , j]), numeric(1))
names(ess) <- dimnames(draws)[[3]][keep]
cat(sprintf("rstan %.1f %.3f %.3f %s %.0f\n", min(ess), cpu, elapsed, names(ess)[which.min(ess)], n_grad))
