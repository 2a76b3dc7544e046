/*
 * Fuzz target: the device selector (docs/DESIGN.md), parsed with bcl_selector_parse
 * and matched with bcl_selector_match against a fixed list of three made-up
 * devices on two platforms, and against an empty list. The input bytes up to
 * the first NUL are the selector text. Invariants (abort on violation):
 *   - parsing gives BCL_OK or BCL_EXIT_INPUT with a one-line message;
 *   - a match names a device that really matches: the same P:D, a device of
 *     that type, or the only device (or platform) whose name contains the
 *     text, ignoring case; "no match" and "ambiguous" are BCL_EXIT_INPUT with
 *     one line; the empty list is BCL_EXIT_RUNTIME for the default selector.
 */
#define _GNU_SOURCE /* strcasestr */
#include "run/run.h"
#include "measure/timing.h"
#include "models/rng.h"
#include "files/files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bcl_device_info devs[3];
static bcl_device_list list = {devs, 3};

static void fill(bcl_device_info *d, unsigned p, unsigned i, const char *plat, const char *name,
                 cl_device_type type)
{
    d->platform_index = p;
    d->device_index = i;
    snprintf(d->platform_name, sizeof d->platform_name, "%s", plat);
    snprintf(d->name, sizeof d->name, "%s", name);
    d->type = type;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fill(&devs[0], 0, 0, "NVIDIA CUDA", "NVIDIA H200", CL_DEVICE_TYPE_GPU);
    fill(&devs[1], 1, 0, "Portable Computing Language", "pthread-haswell-AMD EPYC 7B13",
         CL_DEVICE_TYPE_CPU);
    fill(&devs[2], 1, 1, "Portable Computing Language", "Oclgrind Simulator",
         CL_DEVICE_TYPE_ACCELERATOR);
    return 0;
}

static void check(int ok, const char *what, const char *text, const bcl_error *e)
{
    if (!ok) {
        fprintf(stderr, "fuzz_selector: invariant broken for '%s': %s (message \"%s\")\n", text,
                what, e->msg);
        abort();
    }
}

static void check_error(int rc, int want, const char *text, const bcl_error *e)
{
    check(rc == want && e->code == want, "wrong exit class", text, e);
    check(e->msg[0] != '\0' && strchr(e->msg, '\n') == NULL, "message empty or not one line", text,
          e);
}

static bool name_matches(const bcl_device_info *d, const char *s)
{
    return !*s || strcasestr(d->name, s) || strcasestr(d->platform_name, s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!devs[0].name[0])
        LLVMFuzzerInitialize(NULL, NULL);
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    bcl_error e = {0};
    bcl_selector sel;
    int rc = bcl_selector_parse(text, &sel, &e);
    if (rc != BCL_OK) {
        check_error(rc, BCL_EXIT_INPUT, text, &e);
        goto done;
    }
    size_t index = 99;
    rc = bcl_selector_match(&sel, &list, &index, &e);
    if (rc == BCL_OK) {
        check(index < list.count, "index out of range", text, &e);
        const bcl_device_info *d = &devs[index];
        switch (sel.kind) {
        case BCL_SEL_DEFAULT:
            check(index == 0, "default did not pick the GPU", text, &e);
            break;
        case BCL_SEL_INDEX:
            check(d->platform_index == sel.platform && d->device_index == sel.device,
                  "picked another P:D", text, &e);
            break;
        case BCL_SEL_TYPE:
            check((d->type & sel.type) != 0, "picked another type", text, &e);
            break;
        case BCL_SEL_NAME: {
            unsigned hits = 0;
            for (size_t i = 0; i < list.count; i++)
                hits += name_matches(&devs[i], sel.name);
            check(name_matches(d, sel.name) && hits == 1, "picked a non-matching or ambiguous name",
                  text, &e);
            break;
        }
        }
    } else {
        check_error(rc, BCL_EXIT_INPUT, text, &e);
        check(sel.kind != BCL_SEL_DEFAULT, "the default failed with devices present", text, &e);
    }
    bcl_error_clear(&e);

    /* No device at all: never a crash, never a pick. */
    bcl_device_list none = {NULL, 0};
    index = 99;
    rc = bcl_selector_match(&sel, &none, &index, &e);
    check(rc != BCL_OK && index == 99, "matched in an empty list", text, &e);
    check_error(rc, sel.kind == BCL_SEL_DEFAULT ? BCL_EXIT_RUNTIME : BCL_EXIT_INPUT, text, &e);
done:
    bcl_error_clear(&e);
    free(text);
    return 0;
}
