/*
 * What the ranks of `ballcl run` must agree on (docs/SCALING.md): the
 * fields of the job, in a fixed order, compared by ranks_agree before the
 * first collective of the run (the shared options agreed on are those
 * the options table marks, options.c). What may differ is left out: the
 * devices (-d, BALLCL_DEVICE), --local, --variant, --steps-per-launch, the
 * cache (folder, --no-cache) and -v, each rank's own.
 */
#include "ranks.h"
#include "run.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The kernel folder the program will read, as bcl_kernel_dir finds it:
 * BALLCL_KERNEL_DIR, else beside the executable, else installed. Two ranks
 * with different kernels would compute different things under one name. */
static void add_kernel_folder(ranks_job *j)
{
    const char *env = getenv("BALLCL_KERNEL_DIR");
    if (env && *env) {
        ranks_job_add_path(j, "the kernel folder (BALLCL_KERNEL_DIR)", env);
        return;
    }
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) {
        ranks_job_add(j, "the kernel folder (BALLCL_KERNEL_DIR)", "the default");
        return;
    }
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    char cand[PATH_MAX + 8];
    snprintf(cand, sizeof cand, "%s/../cl", exe);
    char *real = realpath(cand, NULL);
    ranks_job_add(j, "the kernel folder (BALLCL_KERNEL_DIR)", "the default (%s)",
                  real ? real : "installed");
    free(real);
}

int run_agree(const run_args *a, int rc, const bcl_error *e)
{
    if (rc)
        return ranks_agree(NULL, rc, e, false);
    ranks_job j;
    ranks_job_init(&j, "run");
    const bcl_model *m = a->o.model.model;
    ranks_job_add(&j, "--model", "%s", m->name);
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
    /* Files present or writable on some ranks only (node-local folders)
     * would fail MPI_File_open on those alone, and the others would wait
     * in it for ever: every rank checks them, and all agree. */
    bcl_error fe = {0};
    rc = ranks_check_file("--input", a->input, false, &fe);
    if (rc == BCL_OK)
        rc = ranks_check_file("--output", a->output, true, &fe);
    rc = ranks_agree(&j, rc, &fe, false);
    ranks_job_free(&j);
    /* The same path may name node-local files of different content. */
    if (rc == BCL_OK && a->input)
        rc = ranks_agree_content("--input", a->input);
    bcl_error_clear(&fe);
    return rc;
}
