#include "models/models.h"
#include "util/util.h"
int bcl_cref_open(const char *path, unsigned nparams, const char *const *param_names,
                  const char *cache_dir, bool use_cache, bcl_cref **out, bcl_error *e)
{
    (void)path;
    (void)nparams;
    (void)param_names;
    (void)cache_dir;
    (void)use_cache;
    *out = 0;
    return bcl_fail(e, 2, "no cref yet");
}
int bcl_cref_run(bcl_cref *r, float *state, size_t n, uint64_t steps, const float *params,
                 double limit_s, bool f, bcl_error *e)
{
    (void)r;
    (void)state;
    (void)n;
    (void)steps;
    (void)params;
    (void)limit_s;
    (void)f;
    return bcl_fail(e, 2, "no cref yet");
}
void bcl_cref_close(bcl_cref *r)
{
    (void)r;
}
