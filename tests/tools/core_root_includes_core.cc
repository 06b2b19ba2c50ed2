// Compiled against kvsim_core's include root only: must compile (positive control).
#include "core/ids.h"
