/*
 * Model files (docs/MODELS.md): a user's update of one ball in OpenCL C,
 * its parameters declared by "#pragma ballcl param NAME DEFAULT" lines.
 * The kernels around the update are generated as for a built-in model
 * (cl/kernels.cl); the reference is the same update in C, compiled at run
 * time (src/models/cref.c), or none ("not validated: no reference").
 */
#include "model_impl.h"
#include "models/models.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A model file is a few KiB of source: a larger one is not one. */
#define MAX_MODEL_BYTES ((uint64_t)1 << 20)
#define NAME_MAX_LEN    31
/* The most CPU sets a work-item may be asked to hold (registers run out
 * long before). */
#define MAX_SETS 16

extern const bcl_model bcl_model_seed;
extern const bcl_model bcl_model_bounce;

struct bcl_model_file {
    bcl_model model;
    char *text;
    char path[1024];
    char name[NAME_MAX_LEN + 1];
    char summary[1100];
    char digest[65];
    char key[NAME_MAX_LEN + 18];
    bcl_param params[BCL_MAX_PARAMS];
    char opts[BCL_MAX_PARAMS][NAME_MAX_LEN + 1];
    char defaults[BCL_MAX_PARAMS][48];
    bcl_cref *cref; /* the C reference, once given */
    double limit_s;
};

/* The file's name without folders and ".cl", made an OpenCL identifier:
 * the kernels are named after it (<name>_steps). */
static void model_name(const char *path, char *out, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strcspn(base, ".");
    size_t o = 0;
    if (len == 0 || isdigit((unsigned char)base[0]))
        out[o++] = 'm';
    for (size_t i = 0; i < len && o + 1 < size; i++)
        out[o++] = isalnum((unsigned char)base[i]) ? base[i] : '_';
    out[o] = '\0';
}

/* One "#pragma ballcl WHAT ..." line (words after "ballcl" in rest). */
static int pragma_line(struct bcl_model_file *f, unsigned line, char *rest, bcl_error *e)
{
    char *save = NULL;
    const char *what = strtok_r(rest, " \t\r", &save);
    const char *a = strtok_r(NULL, " \t\r", &save);
    const char *b = strtok_r(NULL, " \t\r", &save);
    const char *extra = strtok_r(NULL, " \t\r", &save);
    bcl_model *m = &f->model;
    if (what && strcmp(what, "param") == 0) {
        if (!a || !b || extra)
            return bcl_fail(e, BCL_EXIT_INPUT,
                            "%s:%u: expected '#pragma ballcl param NAME DEFAULT'", f->path, line);
        bool ident = isalpha((unsigned char)a[0]) || a[0] == '_';
        for (const char *c = a; *c; c++)
            ident = ident && (isalnum((unsigned char)*c) || *c == '_');
        if (!ident || strlen(a) > NAME_MAX_LEN)
            return bcl_fail(e, BCL_EXIT_INPUT,
                            "%s:%u: parameter name '%s': expected a C identifier of at most %d "
                            "characters",
                            f->path, line, a, NAME_MAX_LEN);
        for (unsigned i = 0; i < m->nparams; i++)
            if (strcmp(f->opts[i], a) == 0)
                return bcl_fail(e, BCL_EXIT_INPUT, "%s:%u: parameter '%s' is declared twice",
                                f->path, line, a);
        if (m->nparams == BCL_MAX_PARAMS)
            return bcl_fail(e, BCL_EXIT_INPUT, "%s:%u: more than %d parameters", f->path, line,
                            BCL_MAX_PARAMS);
        char what_[1200];
        snprintf(what_, sizeof what_, "%s:%u: default of '%s'", f->path, line, a);
        float v;
        int rc = bcl_parse_float(b, what_, &v, e);
        if (rc)
            return rc;
        unsigned i = m->nparams++;
        snprintf(f->opts[i], sizeof f->opts[i], "%s", a);
        snprintf(f->defaults[i], sizeof f->defaults[i], "%.9g", (double)v);
        f->params[i] = (bcl_param){.opt = f->opts[i],
                                   .help = "a parameter of the model file",
                                   .count = 1,
                                   .defaults = f->defaults[i]};
        return BCL_OK;
    }
    unsigned *field = !what                        ? NULL
                      : strcmp(what, "flops") == 0 ? &m->flops_per_step
                      : strcmp(what, "ops") == 0   ? &m->ops_per_step
                      : strcmp(what, "sets") == 0  ? &m->cpu_sets
                                                   : NULL;
    if (!field)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "%s:%u: unknown '#pragma ballcl %s': expected param, flops, ops or sets",
                        f->path, line, what ? what : "");
    uint64_t v;
    char what_[1200];
    snprintf(what_, sizeof what_, "%s:%u: #pragma ballcl %s", f->path, line, what);
    int rc = !a || b ? bcl_fail(e, BCL_EXIT_INPUT, "%s: expected one number", what_)
                     : bcl_parse_u64(a, what_, 1, field == &m->cpu_sets ? MAX_SETS : 100000, &v, e);
    if (rc == BCL_OK)
        *field = (unsigned)v;
    return rc;
}

/* Every "#pragma ballcl" line of the text. */
static int read_pragmas(struct bcl_model_file *f, bcl_error *e)
{
    unsigned line = 1;
    for (const char *p = f->text; *p; line++) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        const char *q = p + strspn(p, " \t");
        if (*q == '#') {
            q += 1 + strspn(q + 1, " \t");
            if (strncmp(q, "pragma", 6) == 0) {
                q += 6 + strspn(q + 6, " \t");
                if (strncmp(q, "ballcl", 6) == 0 && (q[6] == ' ' || q[6] == '\t')) {
                    char rest[256];
                    size_t rl = len - (size_t)(q + 6 - p);
                    if (rl >= sizeof rest)
                        return bcl_fail(e, BCL_EXIT_INPUT, "%s:%u: pragma line too long", f->path,
                                        line);
                    memcpy(rest, q + 6, rl);
                    rest[rl] = '\0';
                    int rc = pragma_line(f, line, rest, e);
                    if (rc)
                        return rc;
                }
            }
        }
        p = nl ? nl + 1 : p + len;
    }
    return BCL_OK;
}

/* A model file's balls start as a built-in model's (docs/MODELS.md): the
 * bounce model's with its default box for --init seed (uniform in 800 x
 * 600, velocities in [-200, 200)), the seed model's for --init random
 * (mixed signs and magnitudes), so a model file of either update starts
 * from the built-in's bits. */
static void file_init(float *s, size_t first, size_t n, bcl_init how, uint64_t seed, const float *p)
{
    (void)p;
    if (how == BCL_INIT_RANDOM) {
        bcl_model_seed.init(s, first, n, how, seed, NULL);
        return;
    }
    float dp[BCL_MAX_PARAMS * 2];
    bcl_model_param_defaults(&bcl_model_bounce, dp);
    bcl_model_bounce.init(s, first, n, how, seed, dp);
}

static void hex(const unsigned char *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
}

static int model_from_source(const char *name, const char *text, size_t len, bcl_model **out,
                             bcl_error *e)
{
    *out = NULL;
    struct bcl_model_file *f = calloc(1, sizeof *f);
    if (!f || !(f->text = malloc(len + 1))) {
        free(f);
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    }
    memcpy(f->text, text, len);
    f->text[len] = '\0';
    f->model.file = f;
    snprintf(f->path, sizeof f->path, "%s", name);
    bcl_model *m = &f->model;
    int rc = BCL_OK;
    if (strlen(f->text) != len)
        rc = bcl_fail(e, BCL_EXIT_INPUT, "%s: a NUL byte in the source: expected OpenCL C text",
                      name);
    if (rc == BCL_OK)
        rc = read_pragmas(f, e);
    const char *names[BCL_MAX_PARAMS];
    for (unsigned i = 0; i < m->nparams; i++)
        names[i] = f->opts[i];
    unsigned line;
    if (rc == BCL_OK)
        rc = bcl_source_check_literals(f->text, len, name, e);
    if (rc == BCL_OK)
        rc = bcl_source_check_update(f->text, len, name, m->nparams, names, &line, e);
    unsigned char d[32];
    if (rc == BCL_OK)
        rc = bcl_sha256(f->text, len, d, e);
    if (rc) {
        bcl_model_free(m);
        return rc;
    }
    hex(d, sizeof d, f->digest);
    model_name(name, f->name, sizeof f->name);
    snprintf(f->key, sizeof f->key, "%s-%.16s", f->name, f->digest);
    snprintf(f->summary, sizeof f->summary, "model file %s", name);
    m->name = f->name;
    m->summary = f->summary;
    m->kernel_file = f->path;
    m->params = f->params;
    m->init = file_init;
    m->source = f->text;
    m->digest = f->digest;
    m->file = f;
    if (!m->cpu_sets)
        m->cpu_sets = 2;
    *out = m;
    return BCL_OK;
}

int bcl_model_load(const bcl_model_spec *spec, bcl_model **out, bcl_error *e)
{
    *out = NULL;
    const char *path = spec->path ? spec->path : "model.cl";
    char *text = NULL;
    size_t len = spec->len;
    if (!spec->text) {
        int err = bcl_read_file(path, MAX_MODEL_BYTES, &text, &len, NULL);
        if (err == ENOMEM)
            return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory reading '%s'", path);
        if (err == EFBIG)
            return bcl_fail(e, BCL_EXIT_INPUT,
                            "--model-file '%s': larger than 1 MiB: expected a model's OpenCL C "
                            "source",
                            path);
        if (err)
            return bcl_fail(e, BCL_EXIT_INPUT, "--model-file '%s': %s", path, bcl_read_error(err));
    }
    int rc = model_from_source(path, spec->text ? spec->text : text, len, out, e);
    free(text);
    if (rc == BCL_OK && spec->reference &&
        (rc = bcl_model_file_reference(*out, spec->reference, spec->cache_dir, spec->use_cache,
                                       spec->reference_limit_s, e))) {
        bcl_model_free(*out);
        *out = NULL;
    }
    return rc;
}

int bcl_model_file_reference(bcl_model *m, const char *path, const char *cache_dir, bool use_cache,
                             double limit_s, bcl_error *e)
{
    struct bcl_model_file *f = m->file;
    if (!f)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "--reference: model '%s' is built in and has its own reference", m->name);
    const char *names[BCL_MAX_PARAMS];
    for (unsigned i = 0; i < m->nparams; i++)
        names[i] = f->opts[i];
    bcl_cref *r;
    int rc = bcl_cref_open(path, m->nparams, names, cache_dir, use_cache, &r, e);
    if (rc)
        return rc;
    bcl_cref_close(f->cref);
    f->cref = r;
    f->limit_s = limit_s;
    return BCL_OK;
}

bool bcl_model_has_reference(const bcl_model *m)
{
    return m->reference || (m->file && m->file->cref);
}

int bcl_model_reference(const bcl_model *m, float *state, size_t n, uint64_t steps, const float *p,
                        bool flush_denormals, bcl_error *e)
{
    if (m->reference) {
        m->reference(state, n, steps, p);
        return BCL_OK;
    }
    if (!m->file || !m->file->cref)
        return bcl_fail(e, BCL_EXIT_INPUT, "model '%s' has no reference", m->name);
    return bcl_cref_run(m->file->cref, state, n, steps, p, m->file->limit_s, flush_denormals, e);
}

const char *bcl_model_key(const bcl_model *m)
{
    return m->file ? m->file->key : m->name;
}

void bcl_model_free(bcl_model *m)
{
    if (!m || !m->file)
        return;
    struct bcl_model_file *f = m->file;
    bcl_cref_close(f->cref);
    free(f->text);
    free(f);
}
