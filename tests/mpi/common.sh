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

# Timeouts are there to catch hangs. On a loaded machine (1-minute load above the core count) they
# stretch by load / cores: at a load of 13 on 2 cores a chain spread over 2 ranks, which waits on
# its partner at every step, runs about 10 times slower than on an idle machine.
load_factor() { awk -v n="$(nproc)" '{ f = $1 / n; print (f > 1 ? int(f + 0.999) : 1) }' /proc/loadavg; }

# A chain spread over ranks (ranks_per_chain > 1) exchanges with its partner ranks at every
# leapfrog step. At a 1-minute load of 4 or more per core each exchange waits for a partner that
# is not scheduled, and a run of seconds takes hours (at load 10 on 2 cores a pseudo-extended
# eight-schools run on 2 ranks wrote no draw in 28 minutes; its processes got a few seconds of
# CPU). Tests skip such runs there and say so; exit code SKIP (ctest's SKIP_RETURN_CODE) makes
# ctest report the test as skipped rather than passed.
SKIP=77
overloaded() { awk -v n="$(nproc)" '{ exit !($1 >= 4 * n) }' /proc/loadavg; }
overload_note() { echo "load $(cut -d' ' -f1 /proc/loadavg) on $(nproc) cores"; }

run_mpi() {  # run_mpi N args...  (MPI_TIMEOUT=S: give up after S seconds at most loads, default 300)
  local n=$1; shift
  timeout "$(( ${MPI_TIMEOUT:-300} * $(load_factor) ))" mpirun --oversubscribe -n "$n" "$@"
}

fail() { echo "FAIL: $*" >&2; exit 1; }
