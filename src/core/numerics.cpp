// numerics.hpp is header-only; this unit anchors the pemc_core library.
#include "core/numerics.hpp"
