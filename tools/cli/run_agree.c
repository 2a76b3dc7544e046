/*
 * What the ranks of `ballcl run` must agree on (docs/SCALING.md), compared
 * by ranks_agree before the run's first collective. Each rank's own is left
 * out: the devices (-d, BALLCL_DEVICE), --local, --variant,
 * --steps-per-launch, the cache (folder, --no-cache) and -v.
 */
#include "ranks.h"
#include "models/models.h"
#include "run.h"

#include "ocl/ocl.h"

#include <limits.h>
#include <stdlib.h>

/* The kernel folder the program will read (bcl_kernel_dir): two ranks with
 * different kernels would compute different things under one name. */
static void add_kernel_folder(ranks_job *j)
{
    const char *name = "the kernel folder (BALLCL_KERNEL_DIR)", *env = getenv("BALLCL_KERNEL_DIR");
    char dir[PATH_MAX];
    bcl_error e = {0};
    if (env && *env) {
        ranks_job_add_path(j, name, env);
    } else if (bcl_kernel_dir(dir, sizeof dir, &e) == BCL_OK) {
        char *real = realpath(dir, NULL);
        ranks_job_add(j, name, "the default (%s)", real ? real : dir);
        free(real);
    } else {
        ranks_job_add(j, name, "the default");
    }
    bcl_error_clear(&e);
}

int run_agree(const run_args *a, int rc, const bcl_error *e)
{
    if (rc)
        return ranks_agree(NULL, rc, e, false);
    ranks_job j;
    ranks_job_init(&j, "run");
    const bcl_model *m = a->o.model.model;
    ranks_job_add(&j, "--model", "%s", bcl_model_key(m));
    /* Each parameter as the model reads it (defaults included), so that
     * "--gravity 9.8" and nothing at all agree when they mean the same. */
    unsigned at = 0;
    for (unsigned i = 0; i < m->nparams; i++) {
        char name[40], value[128] = "";
        snprintf(name, sizeof name, "--%s", m->params[i].opt);
        size_t len = 0;
        for (unsigned k = 0; k < m->params[i].count && len < sizeof value; k++, at++)
            len += (size_t)snprintf(value + len, sizeof value - len, "%s%.9g", k ? "," : "",
                                    (double)a->o.model.params[at]);
        ranks_job_add(&j, name, "%s", value);
    }
    /* --input, -n, -s, --init, --seed, --json, --output, --snapshot,
     * --snapshot-size, --no-validate, --tolerance-ulp, --sync: the options
     * table's (options.c). */
    cli_options_agree(&a->o, &j);
    add_kernel_folder(&j);
    /* A file missing on some ranks only (node-local folders) would fail
     * MPI_File_open on those alone, the others waiting in it for ever. */
    bcl_error fe = {0};
    rc = ranks_check_file("--input", a->input, false, &fe);
    if (rc == BCL_OK)
        rc = ranks_check_file("--output", a->output, true, &fe);
    rc = ranks_agree(&j, rc, &fe, false);
    ranks_job_free(&j);
    /* The same path may name node-local files of different content. */
    if (rc == BCL_OK && a->input)
        rc = ranks_agree_content("--input", a->input);
    if (rc == BCL_OK && a->o.model.file)
        rc = ranks_agree_content("--model-file", a->o.model.file);
    if (rc == BCL_OK && a->o.model.reference)
        rc = ranks_agree_content("--reference", a->o.model.reference);
    bcl_error_clear(&fe);
    return rc;
}
