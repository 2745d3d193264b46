#!/usr/bin/env bash
# Installs pemc's build and test dependencies from Debian 12's packages.
# Idempotent: packages already present are skipped, so re-running is cheap and safe.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config git
  openmpi-bin libopenmpi-dev           # MPI runtime + headers (mpirun, mpicxx)
  libboost-mpi-dev libboost-serialization-dev
  libeigen3-dev
  protobuf-compiler libprotobuf-dev
  libgtest-dev libgmock-dev
  libspdlog-dev libfmt-dev
  libcli11-dev                         # command-line parsing
  librandom123-dev                     # counter-based random streams (Philox/Threefry)
  libsleef-dev                         # vectorised 1-ULP exp (src/core/batched_exp.hpp)
  libbenchmark-dev                     # Google Benchmark, for the bench target
  zlib1g-dev                           # crc32 checksums on records
  libssl-dev                           # SHA-256 of a run's input files and of compiled Stan models (libcrypto)
  gnuplot-nox                          # pemc-report plot
  nlohmann-json3-dev                   # JSON output of pemc-report
  libzip-dev                           # pemc-report reference reads posteriordb's zipped draws
  python3                              # JSON/CSV checks in the MPI end-to-end tests
  r-cran-stanheaders r-cran-rcppeigen libboost-dev  # Stan 2.21 models (the `stan` target)
  libnetcdf-dev                        # pemc-report export --format netcdf (ArviZ InferenceData)
  r-cran-rstan r-cran-posterior        # tests: rstan::read_stan_csv and posterior read CmdStan exports
  python3-xarray python3-netcdf4       # tests: xarray reads the netCDF exports as ArviZ would
  python3-numpy python3-scipy          # tests: ../shared/multimodal's checker; tests/statistical/multimodal
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
