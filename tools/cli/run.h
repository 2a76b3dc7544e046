/*
 * ballcl run: the options, shared by the run in one process (cmd_run.c) and
 * the run under MPI (run_ranks.c).
 */
#ifndef BALLCL_RUN_H
#define BALLCL_RUN_H

#include "cli.h"

typedef struct run_args {
    const char *device;
    uint64_t balls;
    bool balls_given;
    uint64_t steps;
    cli_model_args model;
    bcl_init init;
    bool init_given;
    uint64_t seed;
    const char *input, *output;
    const char *snapshot;
    unsigned snap_w, snap_h; /* 0: from the box's aspect */
    bcl_launch launch;
    bool local_given;          /* --local was given */
    uint64_t steps_per_launch; /* 0: not given */
    const char *variant;       /* --variant, NULL when not given */
    char tuned_note[200];      /* the report's 'tuned' line: used or not, and why */
    bcl_sync sync;
    bool validate, use_cache, json, verbose;
    uint64_t tol_ulp;
} run_args;

/* Fails early, before any work, if the output could not be written. */
int run_check_output_path(const char *path, const char *what, bcl_error *e);
/* The report of a run on one device as JSON (with MPI: rank 0's device and
 * plan, the run's balls, timing and validation). */
json_t *run_report_json(const run_args *a, const bcl_device_info *d, size_t n,
                        const bcl_build_report *br, const bcl_plan *p, size_t chunks,
                        double first_ms, const bcl_sim_timing *t, const bcl_validation *v);

#endif
