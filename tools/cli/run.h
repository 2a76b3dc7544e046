/*
 * ballcl run: what the run in one process (cmd_run.c, on one device or
 * several), its report (run_report.c) and the run under MPI (run_ranks.c)
 * share; its options (run_args) are options.h's.
 */
#ifndef BALLCL_CLI_RUN_H
#define BALLCL_CLI_RUN_H

#include "options.h"

#include "job/job.h"

/* The group options of a run of n balls: what the options chose, the rest
 * left to the plan (the one place for the run in one process and under MPI). */
bcl_group_opts run_group_opts(const run_args *a, size_t n);
/* The report's "model" line: the model and where the state came from. */
void run_print_model(const run_args *a);
/* The report's validation lines; scope follows "the C reference (max N
 * ULP)" (", every rank" under MPI, or ""). */
/* What the validation line says of a run not validated. */
const char *run_not_validated(const run_args *a);
void run_print_validation(const run_args *a, const bcl_validation *v, const char *scope);

/* The report of a run of group g (run_report.c): one device's block, or
 * one per device with the aggregate; and its JSON, bcl_run_json's tree
 * with the CLI's own keys "init" and "seed". */
void run_print_report(const run_args *a, bcl_group *g, size_t n, const bcl_exec_result *r);
json_t *run_group_json(const run_args *a, bcl_group *g, size_t n, const bcl_exec_result *r);

#endif
