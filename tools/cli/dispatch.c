/*
 * The dispatcher of the ballcl program: usage, --version, and a command of a
 * table run with its arguments. main.c calls it with the whole table; the
 * Python module's `python -m ballcl` (python/ballcl/cli.c) with the commands
 * it carries, so that both print the same bytes by the same code.
 */
#include "cli.h"
#include "ranks.h"

#include <stdio.h>
#include <string.h>

static void usage(const cli_command *commands, size_t n, FILE *f)
{
    fprintf(f, "usage: ballcl <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'ballcl <command> --help' describes a command's options;\n"
               "'ballcl --version' (-V) prints the version.\n"
               "Exit status: 0 success, 1 validation mismatch, 2 usage or input error,\n"
               "3 OpenCL or runtime error.\n");
}

int cli_dispatch(const cli_command *commands, size_t n, int argc, char **argv)
{
    if (argc < 2) {
        usage(commands, n, stderr);
        return BCL_EXIT_INPUT;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(commands, n, stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
        printf("ballcl %s\n", BALLCL_VERSION);
        return 0;
    }
    /* Ctrl-C or SIGTERM removes the temporaries of unfinished outputs and
     * exits 130 or 143. */
    bcl_cleanup_install();
    for (size_t i = 0; i < n; i++) {
        if (strcmp(name, commands[i].name) == 0) {
            /* MPI only under a launcher (ranks.h); a plain run never starts it. */
            int rc = ranks_start(&argc, &argv);
            if (rc)
                return ranks_finish(rc);
#ifdef BALLCL_HAVE_MPI
            /* Under mpirun every rank first agrees on the job, in one
             * collective that every command makes first (ranks_agree.c):
             * `run` after reading its options, the others here, on their
             * arguments. Ranks that disagree end with exit 2, never wait in
             * collectives that do not match. */
            if (ranks_active() && strcmp(name, "run") != 0 &&
                (rc = ranks_agree_args(name, argc - 2, argv + 2)))
                return ranks_finish(rc);
#endif
            /* bench under mpirun: each rank on its devices, rank 0 prints
             * every rank's tables in rank order (docs/SCALING.md). */
            bool gather = ranks_active() && strcmp(name, "bench") == 0;
            if (gather)
                ranks_capture_begin();
            rc = commands[i].fn(argc - 1, argv + 1);
#ifdef BALLCL_HAVE_MPI
            /* A command that ended before agreeing (--help) still makes the
             * one call the other ranks make. */
            if (ranks_active() && !ranks_agreed())
                rc = ranks_agree_ended(name, rc);
#endif
            if (gather) {
                ranks_capture_end();
                rc = ranks_worst(rc);
            }
            /* A result that did not reach stdout (a full disk, a closed pipe)
             * is a failure, not a success. */
            if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "ballcl: cannot write to standard output\n");
                return ranks_finish(BCL_EXIT_RUNTIME);
            }
            return ranks_finish(rc);
        }
    }
    char shown[256];
    bcl_escape(name, shown, sizeof shown);
    fprintf(stderr, "ballcl: unknown command '%s': expected one of", shown);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "%s %s", i ? "," : "", commands[i].name);
    fprintf(stderr, "\n");
    return BCL_EXIT_INPUT;
}
