/*
 * A program that embeds ballcl through its installed header and nothing
 * else: N balls of the bounce model for S steps on one device (a group of
 * one), the state read back and compared bit for bit with the model's C
 * reference. It compiles as C and as C++ (the build does both).
 *
 *   cc embed.c $(pkg-config --cflags --libs ballcl) -o embed
 *   ./embed [SELECTOR [N [S]]]      (SELECTOR "": the default device)
 *
 * Exit status: 0 the device gave the reference's bits, 1 it did not, 2 bad
 * arguments, 3 an OpenCL or runtime error, 77 no OpenCL device at all.
 */
#include <ballcl/ballcl.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(bcl_error *e)
{
    if (e->cl_call[0])
        fprintf(stderr, "embed: %s (%s gave %s)\n", e->msg, e->cl_call, e->cl_status);
    else
        fprintf(stderr, "embed: %s\n", e->msg);
    int code = e->code ? e->code : BCL_EXIT_RUNTIME;
    bcl_error_clear(e);
    return code;
}

/* A whole decimal number in [min, max], or false. */
static bool parse_count(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
    if (text[0] < '0' || text[0] > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || *end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

int main(int argc, char **argv)
{
    fprintf(stderr, "embed: libballcl %s (header %s)\n", bcl_version(), BALLCL_VERSION);
    /* "" as SELECTOR: the default device, so that N and S can be given. */
    const char *selector = argc > 1 && argv[1][0] ? argv[1] : NULL;
    uint64_t n = 10007, steps = 250;
    if (argc > 2 && !parse_count(argv[2], 1, 1u << 26, &n)) {
        fprintf(stderr, "embed: N must be a whole number from 1 to %u\n", 1u << 26);
        return BCL_EXIT_INPUT;
    }
    if (argc > 3 && !parse_count(argv[3], 0, 1u << 20, &steps)) {
        fprintf(stderr, "embed: S must be a whole number from 0 to %u\n", 1u << 20);
        return BCL_EXIT_INPUT;
    }

    /* Every public struct is zeroed before use: its reserved tail must be
     * zero (the top of ballcl/ballcl.h). */
    bcl_error e;
    memset(&e, 0, sizeof e);
    /* Lifetimes: the device list outlives the group. */
    bcl_device_list list;
    memset(&list, 0, sizeof list);
    if (bcl_devices_enumerate(&list, &e) != BCL_OK) {
        fprintf(stderr, "embed: skipped: %s\n", e.msg);
        bcl_error_clear(&e);
        return 77;
    }
    size_t di;
    const bcl_model *m = bcl_model_find("bounce");
    float params[BCL_MAX_PARAMS];
    bcl_model_param_defaults(m, params);
    bcl_group *g = NULL;
    float *init = NULL, *state = NULL;
    const bcl_device_info *devs[1] = {NULL};
    int rc = bcl_device_select(&list, selector, &di, &e);
    if (rc == BCL_OK)
        devs[0] = &list.dev[di];
    /* Two host copies: the initial state and the result. */
    if (rc == BCL_OK)
        rc = bcl_group_memory_fit(devs, 1, n, 2, "N", &e);
    if (rc == BCL_OK) {
        init = (float *)malloc(n * 4 * sizeof(float));
        state = (float *)malloc(n * 4 * sizeof(float));
        if (!init || !state) {
            fprintf(stderr, "embed: out of memory\n");
            rc = BCL_EXIT_RUNTIME;
        }
    }
    if (rc == BCL_OK) {
        bcl_model_fill(m, init, 0, n, BCL_INIT_RANDOM, 42, params);
        /* Everything left open is chosen by the plan: K, variant, local
         * size (what 'ballcl tune' stored for the device, else the rules). */
        bcl_group_opts o;
        memset(&o, 0, sizeof o);
        o.model = m;
        o.ctx.use_cache = true;
        o.req.params = params;
        o.req.balls = n;
        o.req.steps = steps;
        rc = bcl_group_open(devs, 1, &o, &g, &e);
    }
    /* One device: the split gives it every ball without measuring. */
    if (rc == BCL_OK)
        rc = bcl_group_split(g, init, &e);
    /* One call loads init, runs the steps, reads the state back and
     * validates it against the C reference. */
    bcl_exec x;
    memset(&x, 0, sizeof x);
    x.steps = steps;
    x.load = x.init = init;
    x.load_balls = n;
    x.out = state;
    x.validate = true;
    bcl_exec_result r;
    if (rc == BCL_OK)
        rc = bcl_group_exec(g, &x, &r, &e);
    if (rc == BCL_OK) {
        const bcl_group_member *mb = bcl_group_member_at(g, 0);
        printf(
            "%s: %llu balls, %llu steps of %s_%s (K %u, local %zu), %.3f ms on the device: "
            "%s\n",
            mb->dev->name, (unsigned long long)n, (unsigned long long)steps, m->name,
            mb->plan.kernel, mb->plan.steps_per_launch, mb->plan.launch.local, mb->timing.device_ms,
            r.v.mismatches ? "DIFFERS from the C reference" : "bit-identical to the C reference");
        rc = r.v.mismatches ? BCL_EXIT_MISMATCH : BCL_OK;
    } else if (e.code) {
        rc = fail(&e);
    }
    bcl_group_close(g);
    bcl_devices_free(&list);
    free(init);
    free(state);
    return rc;
}
