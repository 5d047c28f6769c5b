/* fuzz_replay_pocl.c — fuzz_replay.c onto the driver the ICD loader finds
 * (PoCL here) instead of the stub: see FUZZ_REPLAY_POCL there. One source,
 * two targets (tests/fuzz/module.mk). */
#define FUZZ_REPLAY_POCL 1
#include "tests/fuzz/fuzz_replay.c"
