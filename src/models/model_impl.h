/* What a model file needs: the public types and the PRNG. */
#ifndef BALLCL_MODEL_IMPL_H
#define BALLCL_MODEL_IMPL_H

#include "ballcl/ballcl.h"
#include "models/rng.h"
#include "util/util.h"

#include <float.h>

/* The references rely on float32 arithmetic being done in float32. */
_Static_assert(FLT_EVAL_METHOD == 0, "the C references need FLT_EVAL_METHOD == 0");

#endif
