/*
 * The picture's size as an option gives it ("WxH"): apart from the PNG
 * writer (snapshot.c), so that what parses the options links no libpng
 * (the Python module, a build without libpng).
 */
#include "files/files.h"
#include "util/util.h"

#include <string.h>

int bcl_snapshot_size_parse(const char *text, const char *what, unsigned *w, unsigned *h,
                            bcl_error *e)
{
    char buf[64];
    const char *x = text ? strchr(text, 'x') : NULL;
    if (!x || strlen(text) >= sizeof buf || strchr(x + 1, 'x'))
        return bcl_fail(e, BCL_EXIT_INPUT, "%s: '%s' is not a size: expected WxH, e.g. 800x600",
                        what, text ? text : "");
    memcpy(buf, text, (size_t)(x - text));
    buf[x - text] = '\0';
    uint64_t a, b;
    int rc = bcl_parse_u64(buf, what, BCL_SNAPSHOT_MIN_SIDE, BCL_SNAPSHOT_MAX_SIDE, &a, e);
    if (rc == BCL_OK)
        rc = bcl_parse_u64(x + 1, what, BCL_SNAPSHOT_MIN_SIDE, BCL_SNAPSHOT_MAX_SIDE, &b, e);
    if (rc)
        return rc;
    *w = (unsigned)a;
    *h = (unsigned)b;
    return BCL_OK;
}
