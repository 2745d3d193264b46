// weighted_moments.hpp is header-only; this unit anchors the pemc_estimators library.
#include "estimators/weighted_moments.hpp"
