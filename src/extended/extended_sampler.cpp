// extended_sampler.hpp is a header of shared types; this unit anchors the pemc_extended library.
#include "extended/extended_sampler.hpp"
