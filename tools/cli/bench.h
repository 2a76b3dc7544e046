/*
 * ballcl bench (docs/BENCHMARK.md): the rows measured for one N, shared between the
 * measuring (cmd_bench.c) and the reporting (bench_report.c).
 */
#ifndef BALLCL_BENCH_H
#define BALLCL_BENCH_H

#include "options.h"

/* The options of 'ballcl bench'. */
typedef struct bench_args {
    cli_options o; /* the shared options */
    const char *csv;
    bool sweep;            /* --sweep: the defaults against a sweep */
    unsigned sweep_ks[16]; /* --sweep-k */
    size_t nsweep_ks;
    size_t sweep_locals[16]; /* --sweep-local (0: the driver's choice) */
    size_t nsweep_locals;
} bench_args;

/* bench over several devices (docs/BENCHMARK.md, "Several devices"): for
 * each N, every device's shard timed alone and the row all-devices, all of
 * them at once, with the scaling efficiency. */
int bench_multi(const bench_args *a, const bcl_device_info *const *devs, size_t ndev,
                const char *date, bcl_error *e);

/* The rows, in table order (cmd_bench.c's table says what each asks for). */
enum {
    ROW_REFERENCE,
    ROW_OPENMP,
    ROW_LOCAL_1,
    ROW_LOCAL_DRIVER,
    ROW_LOCAL_AUTO,
    ROW_LOCAL_TUNED,
    ROW_SYNC_EVERY,
    ROW_BATCHED,
    ROW_FLOOR,
    ROW_FUSED,
    ROW_COUNT
};

typedef struct bench_row {
    const char *name;
    bool host;            /* a host loop, not a device launch */
    bool openmp;          /* the OpenMP host loop (else the reference, for host rows) */
    bool host_clock;      /* the figure is host wall time (else device time) */
    bool bare;            /* the floor: launches enqueued bare (bcl_plan.bare) */
    bcl_plan_request req; /* device rows: what the row asks for */
    bcl_plan plan;        /* and what it runs, resolved */
    unsigned threads;     /* host rows */
    bool validated;       /* same bits as the C reference */
    bool tuned_missing;   /* local=tuned fell back to auto */
    const char *na;       /* why the row was left out (NULL: it ran) */
    bcl_validation v;
    bcl_measurement m;
} bench_row;

typedef struct bench_result {
    size_t balls;
    bcl_stats copy_rate;
    size_t copy_bytes;
    bcl_add_rate add;      /* the add-rate bound, timed between the rows' repeats */
    unsigned ops_per_step; /* the model's float operations per ball-step (bcl_model); 0:
                              unknown (a model file without #pragma ballcl ops) */
    bench_row rows[ROW_COUNT];
    /* Why the device's profiling failed its check (the copy and the device
     * rows are then timed by the host clock); NULL when it passed. */
    const char *clock_note;
    bool copy_host_clock; /* the copy bandwidth is the host clock's */
} bench_result;

/* What heads the output of every N: the options, the device, the date. */
typedef struct bench_info {
    const bench_args *a;
    const bcl_device_info *dev;
    char date[32];
} bench_info;

/* bench --sweep (docs/PERFORMANCE.md): for each N the untuned default
 * plan, the tuned one and the best of K x local size x variant, side by
 * side (bcl_sweep); a table, or with --json one document. */
int bench_sweep(const bench_args *a, bcl_context *ctx, const bench_info *info, bcl_error *e);

/* The human table with its footer (the seed's three mistakes). */
void bench_print_table(const bench_info *info, const bench_result *res);
/* One JSON object for one N (rows and copy bandwidth). */
json_t *bench_result_json(const bench_result *res);
/* The common fields (device, model, date...) of the JSON output. */
json_t *bench_info_json(const bench_info *info);
/* Appends CSV lines (header first when header is set) for res to out. */
int bench_csv_append(char **buf, size_t *len, const bench_result *res, bool header, bcl_error *e);

#endif
