/*
 * The model table: the only place the models are named. Launch, cache,
 * validation and benchmark code reach a model only through this table.
 */
#include "models/rng.h"
#include "util/util.h"

#include <stdio.h>
#include <string.h>

extern const bcl_model bcl_model_seed;
extern const bcl_model bcl_model_bounce;

const bcl_model *const bcl_models[] = {
    &bcl_model_seed,
    &bcl_model_bounce,
};
const size_t bcl_model_count = sizeof bcl_models / sizeof bcl_models[0];

const bcl_model *bcl_model_find(const char *name)
{
    for (size_t i = 0; i < bcl_model_count; i++)
        if (strcmp(bcl_models[i]->name, name) == 0)
            return bcl_models[i];
    return NULL;
}

void bcl_model_fill(const bcl_model *m, float *state, size_t first, size_t n, bcl_init how,
                    uint64_t seed, const float *p)
{
    /* Slices of 64K balls: 1 MiB each, many per thread for balance. */
    const size_t slice = (size_t)1 << 16;
    long long slices = (long long)((n + slice - 1) / slice);
#pragma omp parallel for schedule(static)
    for (long long k = 0; k < slices; k++) {
        size_t a = (size_t)k * slice;
        size_t c = n - a < slice ? n - a : slice;
        m->init(state + 4 * a, first + a, c, how, seed, p);
    }
}

static unsigned param_offset(const bcl_model *m, unsigned i)
{
    unsigned off = 0;
    for (unsigned j = 0; j < i; j++)
        off += m->params[j].count;
    return off;
}

unsigned bcl_model_param_floats(const bcl_model *m)
{
    return param_offset(m, m->nparams);
}

int bcl_model_param_parse(const bcl_model *m, unsigned i, const char *text, float *p, bcl_error *e)
{
    const bcl_param *par = &m->params[i];
    char what[64];
    snprintf(what, sizeof what, "--%s", par->opt);
    char buf[128];
    if (strlen(text) >= sizeof buf)
        return bcl_fail(e, BCL_EXIT_INPUT, "%s: value too long", what);
    strcpy(buf, text);
    float *dst = p + param_offset(m, i);
    char *cur = buf;
    for (unsigned c = 0; c < par->count; c++) {
        /* A comma after every number but the last, none after it. */
        char *comma = strchr(cur, ',');
        if ((comma != NULL) != (c + 1 < par->count))
            return bcl_fail(e, BCL_EXIT_INPUT, "%s: '%s': expected %u comma-separated numbers",
                            what, text, par->count);
        if (comma)
            *comma = '\0';
        int rc = bcl_parse_float(cur, what, &dst[c], e);
        if (rc)
            return rc;
        cur = comma ? comma + 1 : cur;
    }
    return BCL_OK;
}

void bcl_model_param_defaults(const bcl_model *m, float *p)
{
    for (unsigned i = 0; i < m->nparams; i++) {
        bcl_error e = {0};
        /* Defaults are part of the table and tested; they always parse. */
        bcl_model_param_parse(m, i, m->params[i].defaults, p, &e);
    }
}
