/*
 * The survey's figures (docs/SURVEY.md), each declared once: the survey
 * writes them, the reader checks them, the flags, the table, `survey
 * check`, the database and the report page all loop over this table.
 * Adding a figure is one line here and its measurement in survey.c.
 */
#include "survey/survey.h"

#define DEV   BCL_FIG_ROW
#define MODEL BCL_FIG_MODEL

/* In the order of the JSON and of the table. */
const bcl_survey_figure bcl_survey_figures[BCL_FIG_COUNT] = {
    /* key, unit, label (the table's row), title (the page's), group, better, since, flags */
    {"build_ms_cold", "ms", "build, cold", "cold build", "build", -1, 1, DEV | BCL_FIG_HISTORY},
    {"build_ms_cached", "ms", "build, from cache", "from the binary cache", "build", -1, 1, DEV},
    {"launch_latency_us", "µs", "launch latency, queued to start", "launch latency", "latency", -1,
     1, DEV | BCL_FIG_COLUMN | BCL_FIG_HISTORY | BCL_FIG_CHECK},
    {"roundtrip_us", "µs", "round trip, enqueue + finish", "round trip", "latency", -1, 1,
     DEV | BCL_FIG_HISTORY | BCL_FIG_CHECK},
    {"copy_gb_per_s", "GB/s", "copy bandwidth", "copy", "bandwidth", +1, 1,
     DEV | BCL_FIG_COLUMN | BCL_FIG_HISTORY | BCL_FIG_CHECK | BCL_FIG_GB},
    {"read_only_gb_per_s", "GB/s", "read-only bandwidth", "read-only", "bandwidth", +1, 3,
     DEV | BCL_FIG_COLUMN | BCL_FIG_HISTORY | BCL_FIG_CHECK | BCL_FIG_GB},
    {"add_gflop_per_s", "GFLOP/s", "add-rate bound", "float add", "rates", +1, 1,
     DEV | BCL_FIG_OPTIONAL | BCL_FIG_COLUMN | BCL_FIG_HISTORY | BCL_FIG_CHECK | BCL_FIG_PEAK},
    {"fma_gflop_per_s", "GFLOP/s", "float FMA rate (FMA = 2)", "float FMA", "rates", +1, 3,
     DEV | BCL_FIG_COLUMN | BCL_FIG_HISTORY | BCL_FIG_CHECK | BCL_FIG_PEAK},
    {"int_add_gop_per_s", "GOP/s", "int32 add rate", "int32 add", "rates", +1, 3,
     DEV | BCL_FIG_CHECK | BCL_FIG_PEAK},
    {"fp64_gflop_per_s", "GFLOP/s", "double FMA rate", "fp64", "rates", +1, 3,
     DEV | BCL_FIG_OPTIONAL | BCL_FIG_CHECK | BCL_FIG_PEAK},
    {"half_gflop_per_s", "GFLOP/s", "half FMA rate", "half", "rates", +1, 3,
     DEV | BCL_FIG_OPTIONAL | BCL_FIG_CHECK | BCL_FIG_PEAK2},
    {"write_gb_per_s", "GB/s", "host to device", "to device", NULL, +1, 2,
     DEV | BCL_FIG_COLUMN | BCL_FIG_HISTORY | BCL_FIG_CHECK | BCL_FIG_GB},
    {"read_gb_per_s", "GB/s", "device to host", "from device", NULL, +1, 2,
     DEV | BCL_FIG_COLUMN | BCL_FIG_HISTORY | BCL_FIG_CHECK | BCL_FIG_GB},
    {"transfer.pinned_write_gb_per_s", "GB/s", "pinned write", "pinned to device", "transfer", +1,
     2, BCL_FIG_GB},
    {"transfer.pinned_read_gb_per_s", "GB/s", "pinned read", "pinned from device", "transfer", +1,
     2, BCL_FIG_GB},
    {"transfer.pageable_write_gb_per_s", "GB/s", "pageable write", "pageable to device", "transfer",
     +1, 2, BCL_FIG_GB},
    {"transfer.pageable_read_gb_per_s", "GB/s", "pageable read", "pageable from device", "transfer",
     +1, 2, BCL_FIG_GB},
    {"transfer.mapped_write_gb_per_s", "GB/s", "mapped write", "mapped to device", "transfer", +1,
     3, DEV | BCL_FIG_GB},
    {"transfer.mapped_read_gb_per_s", "GB/s", "mapped read", "mapped from device", "transfer", +1,
     3, DEV | BCL_FIG_GB},
    /* Each model's, under its object. */
    {"large.ball_steps_per_s", "ball-steps/s", "large rate", "large", NULL, +1, 1,
     MODEL | BCL_FIG_CHECK},
    {"best_local", "", "best local size", "best local", NULL, 0, 1, MODEL},
    {"local1_penalty", "×", "local = 1 penalty", "local = 1 penalty", "penalty", -1, 1,
     MODEL | BCL_FIG_COLUMN | BCL_FIG_HISTORY},
    {"fused_ball_steps_per_s", "ball-steps/s", "fused rate", "fused", "fused", +1, 1,
     MODEL | BCL_FIG_COLUMN | BCL_FIG_HISTORY | BCL_FIG_CHECK | BCL_FIG_RATE},
};

const char *bcl_survey_key(bcl_fig f)
{
    return bcl_survey_figures[f].key;
}
