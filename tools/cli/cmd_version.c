/*
 * ballcl version: the version of the program and of the library in it, as
 * text or JSON (--json). `ballcl --version` prints the same line.
 */
#include "options.h"

static void help(void)
{
    printf("usage: ballcl version [--json]\n\n"
           "Prints the version of ballcl (the program and the library it holds).\n\n"
           "  --json       print {\"ballcl_version\": ..., \"library\": ...} instead\n"
           "  -h, --help   this help\n");
}

int cmd_version(int argc, char **argv)
{
    bcl_error e = {0};
    cli_options o;
    int rc = cli_options_only(&o, "version", help, CLI_JSON, argc, argv, &e);
    if (rc || (rc = cli_options_finish(&o, argc, argv, &e)))
        return rc < 0 ? 0 : cli_report(&e);
    if (!o.json) {
        printf("ballcl %s\n", BALLCL_VERSION);
        return BCL_OK;
    }
    json_t *j = json_pack("{s:s, s:s}", "ballcl_version", BALLCL_VERSION, "library", bcl_version());
    if (!j) {
        bcl_fail(&e, BCL_EXIT_RUNTIME, "out of memory");
        return cli_report(&e);
    }
    cli_print_json(j);
    json_decref(j);
    return BCL_OK;
}
