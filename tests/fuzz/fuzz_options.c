/*
 * Fuzz target: the parsers behind every numeric command-line option
 * (bcl_parse_u64, bcl_parse_float, bcl_local_parse, and each model's
 * parameter parser). The input bytes up to the first NUL are the option text.
 * Invariants (abort on violation):
 *   - each parser returns BCL_OK or BCL_EXIT_INPUT with a one-line message
 *     that names the option;
 *   - an accepted count is all decimal digits, in range, and the same number
 *     as the text; an accepted float is finite; failures leave outputs alone.
 */
#include "run/run.h"
#include "measure/timing.h"
#include "models/rng.h"
#include "files/files.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(int ok, const char *what, const char *text, const bcl_error *e)
{
    if (!ok) {
        fprintf(stderr, "fuzz_options: invariant broken for '%s': %s (message \"%s\")\n", text,
                what, e->msg);
        abort();
    }
}

static void check_error(int rc, const char *opt, const char *text, const bcl_error *e)
{
    check(rc == BCL_EXIT_INPUT && e->code == rc, "wrong exit class", text, e);
    check(e->msg[0] && !strchr(e->msg, '\n'), "message empty or not one line", text, e);
    check(strstr(e->msg, opt) != NULL, "message does not name the option", text, e);
}

/* The value of an all-digit text, or false when it has another character
 * or more than 64 bits: an independent reading to compare with. */
static bool digits_value(const char *t, uint64_t *v)
{
    *v = 0;
    if (!*t)
        return false;
    for (; *t; t++) {
        if (!isdigit((unsigned char)*t))
            return false;
        unsigned d = (unsigned)(*t - '0');
        if (*v > (UINT64_MAX - d) / 10)
            return false;
        *v = *v * 10 + d;
    }
    return true;
}

static void fuzz_u64(const char *text, uint64_t min, uint64_t max)
{
    bcl_error e = {0};
    uint64_t out = 777, want;
    int rc = bcl_parse_u64(text, "--count", min, max, &out, &e);
    bool valid = digits_value(text, &want) && want >= min && want <= max;
    if (rc == BCL_OK)
        check(valid && out == want, "accepted a bad count or changed its value", text, &e);
    else {
        check(!valid, "refused a good count", text, &e);
        check_error(rc, "--count", text, &e);
        check(out == 777, "output changed on failure", text, &e);
    }
    bcl_error_clear(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    fuzz_u64(text, 0, UINT64_MAX);
    fuzz_u64(text, 1, (uint64_t)1 << 40);

    bcl_error e = {0};
    float f = 7.0f;
    int rc = bcl_parse_float(text, "--gravity", &f, &e);
    if (rc == BCL_OK)
        check(isfinite(f), "accepted a non-finite float", text, &e);
    else {
        check_error(rc, "--gravity", text, &e);
        check(f == 7.0f, "output changed on failure", text, &e);
    }
    bcl_error_clear(&e);

    bcl_launch l;
    rc = bcl_local_parse(text, &l, &e);
    if (rc == BCL_OK)
        check(l.mode != BCL_LOCAL_FIXED || (l.local >= 1 && l.local <= (1u << 20)),
              "accepted a local size out of range", text, &e);
    else
        check_error(rc, "--local", text, &e);
    bcl_error_clear(&e);

    for (size_t m = 0; m < bcl_model_count; m++) {
        const bcl_model *model = bcl_models[m];
        for (unsigned i = 0; i < model->nparams; i++) {
            float p[BCL_MAX_PARAMS];
            for (unsigned j = 0; j < BCL_MAX_PARAMS; j++)
                p[j] = 7.0f;
            rc = bcl_model_param_parse(model, i, text, p, &e);
            if (rc == BCL_OK) {
                for (unsigned j = 0; j < bcl_model_param_floats(model); j++)
                    check(isfinite(p[j]), "a parameter is not finite", text, &e);
            } else {
                check_error(rc, model->params[i].opt, text, &e);
            }
            bcl_error_clear(&e);
        }
    }
    free(text);
    return 0;
}
