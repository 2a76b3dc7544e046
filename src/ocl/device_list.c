/*
 * Several devices for one run (docs/DESIGN.md, "Several devices"): a
 * comma-separated list of selectors, each matched as a single selector is,
 * or the word "all" alone for every device of every platform ("all" inside
 * a list is refused: it would name the list's other devices twice).
 */
#include "ocl/ocl.h"

#include <stdio.h>
#include <string.h>

int bcl_device_select_list(const bcl_device_list *list, const char *text, size_t *index, size_t cap,
                           size_t *count, bcl_error *e)
{
    *count = 0;
    if (text && strcmp(text, "all") == 0 && !list)
        return BCL_OK;
    if (text && strcmp(text, "all") == 0) {
        if (list->count == 0)
            return bcl_fail(e, BCL_EXIT_RUNTIME, "no OpenCL device found");
        if (list->count > cap)
            return bcl_fail(e, BCL_EXIT_INPUT, "device selector 'all': %zu devices, at most %zu",
                            list->count, cap);
        for (size_t i = 0; i < list->count; i++)
            index[i] = i;
        *count = list->count;
        return BCL_OK;
    }
    char buf[1024];
    if (text && strlen(text) >= sizeof buf)
        return bcl_fail(e, BCL_EXIT_INPUT, "device selector list too long");
    snprintf(buf, sizeof buf, "%s", text ? text : "");
    /* One selector (no comma) is today's single device, default included. */
    for (char *tok = buf;;) {
        char *comma = strchr(tok, ',');
        if (comma)
            *comma = '\0';
        if ((comma || tok != buf) && !*tok)
            return bcl_fail(e, BCL_EXIT_INPUT,
                            "device selector list '%s': an empty item: expected selectors "
                            "separated by single commas",
                            text);
        if (*count == cap)
            return bcl_fail(e, BCL_EXIT_INPUT, "device selector list '%s': at most %zu devices",
                            text, cap);
        /* "all" is every device: inside a list it would name each device of
         * the list a second time, so it stands alone (one clear refusal
         * rather than a guess at what the rest of the list was for). */
        if (strcmp(tok, "all") == 0)
            return bcl_fail(e, BCL_EXIT_INPUT,
                            "device selector list '%s': 'all' names every device and stands "
                            "alone: expected -d all, or a list of selectors without it",
                            text);
        bcl_selector sel;
        /* No text at all is the default device; an empty one is an error. */
        int rc = bcl_selector_parse(text ? tok : NULL, &sel, e);
        if (rc == BCL_OK && list)
            rc = bcl_selector_match(&sel, list, &index[*count], e);
        if (rc)
            return rc;
        for (size_t j = 0; list && j < *count; j++)
            if (index[j] == index[*count])
                return bcl_fail(e, BCL_EXIT_INPUT,
                                "device selector list '%s': '%s' names device %u:%u a second time",
                                text, tok, list->dev[index[j]].platform_index,
                                list->dev[index[j]].device_index);
        (*count)++;
        if (!comma)
            break;
        tok = comma + 1;
    }
    return BCL_OK;
}
