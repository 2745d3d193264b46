# Shared setup for the MPI end-to-end tests (sourced). CTest sets PEMC_BIN and PEMC_SOURCE_DIR.
set -euo pipefail
: "${PEMC_BIN:?PEMC_BIN (the build directory) must be set}"
: "${PEMC_SOURCE_DIR:?PEMC_SOURCE_DIR must be set}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Loopback only, no warnings about missing high-speed fabrics in containers.
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl=self,tcp,vader
export OMPI_MCA_btl_vader_single_copy_mechanism=none
DIST="$PEMC_BIN/pemc-dist"
REPORT="$PEMC_BIN/pemc-report"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pemc-mpi-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

run_mpi() {  # run_mpi N args...
  local n=$1; shift
  timeout 300 mpirun --oversubscribe -n "$n" "$@"
}

fail() { echo "FAIL: $*" >&2; exit 1; }
