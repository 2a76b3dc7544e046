/*
 * Strict number parsing for options: the whole text must be a number, in
 * range, with nothing after it ("10x", "1e99", "" and "-3" for a count are
 * all errors that name the option and what it expects).
 */
#include "util/util.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

int bcl_parse_u64(const char *text, const char *what, uint64_t min, uint64_t max, uint64_t *out,
                  bcl_error *e)
{
    if (!text || !*text)
        return bcl_fail(e, BCL_EXIT_INPUT, "%s: empty value: expected an integer", what);
    /* strtoull accepts leading space and a minus sign (wrapping around); a
     * count never has either. */
    if (!isdigit((unsigned char)text[0]))
        return bcl_fail(e, BCL_EXIT_INPUT, "%s: '%s' is not a non-negative integer", what, text);
    errno = 0;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (*end)
        return bcl_fail(e, BCL_EXIT_INPUT, "%s: '%s' is not a non-negative integer", what, text);
    if (errno == ERANGE || v < min || v > max)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "%s: '%s' is out of range: expected %" PRIu64 " to %" PRIu64, what, text,
                        min, max);
    *out = v;
    return BCL_OK;
}

int bcl_parse_float(const char *text, const char *what, float *out, bcl_error *e)
{
    if (!text || !*text)
        return bcl_fail(e, BCL_EXIT_INPUT, "%s: empty value: expected a number", what);
    if (isspace((unsigned char)text[0]))
        return bcl_fail(e, BCL_EXIT_INPUT, "%s: '%s' is not a number", what, text);
    errno = 0;
    char *end;
    /* strtof, not strtod then a cast: docs/MODELS.md wants the value parsed
     * directly to float so every implementation starts from the same bits. */
    float v = strtof(text, &end);
    if (end == text || *end)
        return bcl_fail(e, BCL_EXIT_INPUT, "%s: '%s' is not a number", what, text);
    if (!isfinite(v) || (errno == ERANGE && fabsf(v) > 1.0f))
        return bcl_fail(e, BCL_EXIT_INPUT, "%s: '%s' is out of range: expected a finite float32",
                        what, text);
    /* Underflow to 0 (a time step of 0) or a denormal (some devices flush
     * them, breaking bitwise validation) is refused, as an overflow is. */
    if (errno == ERANGE)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "%s: '%s' is out of range: expected a finite float32 of magnitude 0 or "
                        "at least %.9g",
                        what, text, (double)FLT_MIN);
    *out = v;
    return BCL_OK;
}
