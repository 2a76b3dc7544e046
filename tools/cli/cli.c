/* Helpers shared by the subcommands. */
#include "cli.h"
#include "ranks.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int cli_report(bcl_error *e)
{
    fprintf(stderr, "ballcl: %s\n", e->msg[0] ? e->msg : "unknown error");
    if (e->detail && *e->detail) {
        fprintf(stderr, "---- build log ----\n%s", e->detail);
        if (e->detail[strlen(e->detail) - 1] != '\n')
            fputc('\n', stderr);
        fprintf(stderr, "-------------------\n");
    }
    /* Said: the log goes, so that a command may return at once. */
    free(e->detail);
    e->detail = NULL;
    return e->code ? e->code : BCL_EXIT_RUNTIME;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char raw[1024], shown[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    /* The arguments are the user's text: no control characters raw. */
    bcl_escape(raw, shown, sizeof shown);
    fprintf(stderr, "ballcl: %s (see 'ballcl %s --help')\n", shown, cmd);
    return BCL_EXIT_INPUT;
}

void cli_warn(const char *fmt, ...)
{
    char raw[1536], shown[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    bcl_escape(raw, shown, sizeof shown);
    fprintf(stderr, "ballcl: warning: %s\n", shown);
}

int cli_enumerate(bcl_device_list *list, bcl_error *e)
{
    int rc = bcl_devices_enumerate(list, e);
    if (rc)
        return rc;
    for (const char *w = list->warnings; *w;) {
        size_t len = strcspn(w, "\n");
        fprintf(stderr, "ballcl: warning: %.*s\n", (int)len, w);
        w += len + (w[len] == '\n');
    }
    return BCL_OK;
}

const char *cli_selector(const char *sel)
{
    /* An empty BALLCL_DEVICE counts as unset, as usual for variables. */
    const char *env = getenv("BALLCL_DEVICE");
    return sel ? sel : env && *env ? env : NULL;
}

int cli_pick_device(const char *sel_text, bcl_device_list *list, size_t *index, bcl_error *e)
{
    sel_text = cli_selector(sel_text);
    /* The text first: a malformed selector opens no device. */
    int rc = bcl_device_select(NULL, sel_text, index, e);
    if (rc == BCL_OK)
        rc = cli_enumerate(list, e);
    return rc ? rc : bcl_device_select(list, sel_text, index, e);
}

int cli_pick_devices(const char *sel_text, bcl_device_list *list, size_t *index, size_t cap,
                     size_t *count, bcl_error *e)
{
    sel_text = cli_selector(sel_text);
    /* The text first: a malformed selector opens no device. */
    int rc = bcl_device_select_list(NULL, sel_text, index, cap, count, e);
    if (rc == BCL_OK)
        rc = cli_enumerate(list, e);
    if (rc)
        return rc;
#ifdef BALLCL_HAVE_MPI
    /* Under mpirun each rank takes its own devices of the node (bench and
     * tune per rank, docs/SCALING.md). */
    if (ranks_active()) {
        rc = ranks_node_devices(list, sel_text, false, index, cap, count, e);
        if (rc == BCL_OK && *count == 0)
            rc = bcl_fail(e, BCL_EXIT_INPUT, "no device for rank %d", ranks_rank());
        return rc;
    }
#endif
    return bcl_device_select_list(list, sel_text, index, cap, count, e);
}

void cli_print_model_help(FILE *f)
{
    fprintf(f, "  --model M              model:");
    for (size_t m = 0; m < bcl_model_count; m++)
        fprintf(f, " %s%s", bcl_models[m]->name, m ? "" : " (default)");
    fprintf(f, "\n");
    for (size_t m = 0; m < bcl_model_count; m++) {
        const bcl_model *mod = bcl_models[m];
        for (unsigned i = 0; i < mod->nparams; i++) {
            char left[64];
            snprintf(left, sizeof left, "--%s %s", mod->params[i].opt,
                     mod->params[i].count == 2 ? "A,B" : "X");
            fprintf(f, "  %-22s %s model: %s (default %s)\n", left, mod->name, mod->params[i].help,
                    mod->params[i].defaults);
        }
    }
}

const char *cli_local_text(size_t local, char *out, size_t size)
{
    if (local)
        snprintf(out, size, "%zu", local);
    else
        snprintf(out, size, "driver");
    return out;
}

json_t *cli_local_json(size_t local)
{
    return local ? json_integer((json_int_t)local) : json_string("driver");
}

const char *cli_tuned_text(const bcl_tuned_entry *t, char *out, size_t size)
{
    char loc[24];
    snprintf(out, size, "%s, local %s, K %u", t->variant[0] ? t->variant : "base",
             cli_local_text(t->local, loc, sizeof loc), t->steps_per_launch);
    return out;
}

void cli_print_json(json_t *j)
{
    json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
    fputc('\n', stdout);
}

int cli_parse_u64_list(const char *text, const char *what, uint64_t min, uint64_t max,
                       uint64_t *out, size_t cap, size_t *count, bcl_error *e)
{
    *count = 0;
    char buf[1024];
    if (strlen(text) >= sizeof buf)
        return bcl_fail(e, BCL_EXIT_INPUT, "%s: list too long", what);
    strcpy(buf, text);
    /* Split by hand: strtok would skip empty items, which are errors. */
    for (char *tok = buf;;) {
        char *comma = strchr(tok, ',');
        if (comma)
            *comma = '\0';
        if (*count == cap)
            return bcl_fail(e, BCL_EXIT_INPUT, "%s: at most %zu values", what, cap);
        int rc = bcl_parse_u64(tok, what, min, max, &out[*count], e);
        if (rc)
            return rc;
        (*count)++;
        if (!comma)
            break;
        tok = comma + 1;
    }
    if (*count == 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "%s: '%s': expected one or more comma-separated numbers",
                        what, text);
    return BCL_OK;
}
