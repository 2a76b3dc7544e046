/*
 * ballcl: the command table. Each subcommand lives in its own file
 * (cmd_<name>.c) and parses its own options; dispatch.c runs one.
 */
#include "cli.h"

static const cli_command commands[] = {
    {"devices", cmd_devices, CLI_SUMMARY_DEVICES},
    {"run", cmd_run, "run N balls for S steps on one device or several, and validate the result"},
    {"cache", cmd_cache, "list, clear or locate the binary cache of built kernel programs"},
    {"bench", cmd_bench,
     "the seed's mistakes against the right way, side by side (docs/BENCHMARK.md)"},
    {"tune", cmd_tune, "measure the best launch configuration for a device and store it"},
    {"survey", cmd_survey, CLI_SUMMARY_SURVEY},
    {"version", cmd_version, CLI_SUMMARY_VERSION},
};

int main(int argc, char **argv)
{
    return cli_dispatch(commands, sizeof commands / sizeof commands[0], argc, argv);
}
