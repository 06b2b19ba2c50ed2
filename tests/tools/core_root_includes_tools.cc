// Compiled against kvsim_core's include root only: must NOT compile, because core/ may not
// see any other layer. (Fixture for the "layer_root_hides_upper_layers" test.)
#include "tools/kvsim/ledger_demo.h"
