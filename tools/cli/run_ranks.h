/*
 * ballcl run under MPI (docs/SCALING.md), shared by its files: the flow
 * (run_ranks.c) and the one report (run_ranks_report.c).
 */
#ifndef BALLCL_RUN_RANKS_H
#define BALLCL_RUN_RANKS_H

#include "ranks.h"
#include "run.h"

/* Balls per rank and per device are multiples of this (but the last):
 * of every kernel variant's width and of common local sizes. */
#define RANK_BLOCK 1024
/* Most devices one rank drives (the report gathers a fixed record per
 * rank; a node with more devices runs more ranks). */
#define RANK_MAX_DEVICES 16

/* One device of a rank, as rank 0 reports it. */
typedef struct rank_device {
    char selector[16];
    char name[80];
    uint64_t first, count;
    double rate;        /* ball-steps/s measured before the split (0: not measured) */
    double us_per_step; /* its time per step by the host clock, as the rank's */
    double wait_ms;     /* from its end to the end of the rank's slowest device */
} rank_device;

/* What each rank tells rank 0 for the report. */
typedef struct rank_info {
    char host[64];
    int ndev;
    rank_device dev[RANK_MAX_DEVICES];
    uint64_t first, count;
    double rate;    /* the sum of its devices' rates */
    double cal_ms;  /* what measuring them cost */
    double run_ms;  /* from the start barrier to this rank's end */
    double wait_ms; /* from this rank's end to the end barrier */
    double mpi_ms;  /* in collectives, over the whole command */
    double io_ms;   /* in MPI-IO */
    /* The phases of docs/SCALING.md's model: MPI_Init; devices, program and
     * header; the slice loaded; read back and validation; the output. */
    double init_ms, setup_ms, load_ms, check_ms, output_ms;
    double allreduce_us; /* one MPI_Allreduce of a double, mean of 20 */
} rank_info;

/* A rank's work. */
typedef struct job {
    const run_args *a;
    bcl_device_list list;
    const bcl_device_info *devs[RANK_MAX_DEVICES];
    size_t ndev;
    bcl_group *g; /* the rank's devices, opened for all balls and weighed */
    float *state, *init;
    size_t n; /* all balls */
    uint64_t data_offset;
    size_t first, count; /* this rank's */
    bcl_exec_result r;
    double t0, t3; /* MPI_Wtime at the start barrier and after the steps' verdict */
    rank_info me;
} job;

/* Rank 0 gathers every rank's figures and prints the one report
 * (run_ranks_report.c). Collective. */
void ranks_report(job *j, const bcl_validation *v);

#endif
