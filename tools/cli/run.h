/*
 * ballcl run: the options, shared by the run on one device (cmd_run.c),
 * the run over several (run_multi.c) and the run under MPI (run_ranks.c).
 */
#ifndef BALLCL_CLI_RUN_H
#define BALLCL_CLI_RUN_H

#include "options.h"

typedef struct run_args {
    cli_options o; /* the shared options */
    const char *input, *output;
    const char *snapshot;
    unsigned snap_w, snap_h;   /* 0: from the box's aspect */
    uint64_t steps_per_launch; /* 0: not given */
    const char *variant;       /* --variant, NULL when not given */
    char tuned_note[200];      /* the report's 'tuned' line: used or not, and why */
    bcl_sync sync;
    bool validate, verbose;
    uint64_t tol_ulp;
} run_args;

/* The run over several devices (docs/DESIGN.md, "Several devices"): state
 * holds the n initial balls from --input, or NULL: run_multi fills it (the
 * caller frees *state). Writes the
 * output files and the report; returns the exit class with e set. */
int run_multi(const run_args *a, const bcl_device_info *const *devs, size_t ndev, float **state,
              size_t n, bcl_outputs *outs, bcl_error *e);
/* Writes the final state into the outputs prepared before the run (--output
 * first, then --snapshot) and commits them, all or none. */
int run_write_outputs(const run_args *a, bcl_outputs *outs, const float *state, size_t n,
                      bcl_error *e);
/* A state from finite input that is no longer finite (an overflow): the
 * input error naming the ball and the step (init may be NULL: no step). */
int run_check_overflow(const run_args *a, const float *init, const float *state, size_t n,
                       bcl_error *e);
/* The report of a run on one device, or the common fields of one over
 * several (the first device's launch, the aggregate timing). */
json_t *run_report_json(const run_args *a, const bcl_device_info *d, size_t n,
                        const bcl_build_report *br, const bcl_plan *p, size_t chunks,
                        double first_ms, const bcl_sim_timing *t, const bcl_validation *v);
/* One entry of the report's "devices" array. */
json_t *run_member_json(const run_args *a, const bcl_group_member *m);
/* The report's validation lines; scope follows "the C reference (max N
 * ULP)" (", every rank" under MPI, or ""). */
void run_print_validation(const run_args *a, const bcl_validation *v, const char *scope);
/* The report's lines on why K is what it is and the longest launch, and
 * their JSON ("k_reason", "launch_budget_ms", "launch_expect_ms",
 * "launch_costs"), for the "launch" object. */
void run_print_k_reason(const bcl_plan *p, const bcl_sim_timing *t, const char *indent);
json_t *run_k_json(const bcl_plan *p);
/* The "validation" object of the JSON report. */
json_t *run_validation_json(const run_args *a, const bcl_validation *v);

#endif
