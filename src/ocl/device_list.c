/*
 * Several devices for one run (docs/DESIGN.md, "Several devices"): a
 * comma-separated list of selectors, each matched as a single selector is,
 * or the word "all" alone for every device of every platform ("all" inside
 * a list is refused: it would name the list's other devices twice).
 */
#include "ocl/ocl.h"

#include <stdio.h>
#include <string.h>

/* Adds device i to index[] unless it is there (every) or refuses it twice. */
static int add_device(const bcl_device_list *list, const char *text, const char *tok, bool every,
                      size_t i, size_t *index, size_t cap, size_t *count, bcl_error *e)
{
    for (size_t j = 0; j < *count; j++) {
        if (index[j] != i)
            continue;
        if (every)
            return BCL_OK;
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "device selector list '%s': '%s' names device %u:%u a second time", text,
                        tok, list->dev[i].platform_index, list->dev[i].device_index);
    }
    if (*count == cap)
        return bcl_fail(e, BCL_EXIT_INPUT, "device selector list '%s': at most %zu devices", text,
                        cap);
    index[(*count)++] = i;
    return BCL_OK;
}

/* Every device of the type sel names (every) into index[]: the default is
 * every GPU, else every accelerator, else every CPU. */
static int add_every(const bcl_device_list *list, const char *text, const char *tok,
                     const bcl_selector *sel, size_t *index, size_t cap, size_t *count,
                     bcl_error *e)
{
    static const cl_device_type order[] = {CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_ACCELERATOR,
                                           CL_DEVICE_TYPE_CPU};
    size_t before = *count;
    for (size_t o = 0; o < 3 && *count == before; o++) {
        cl_device_type t = sel->kind == BCL_SEL_TYPE ? sel->type : order[o];
        for (size_t i = 0; i < list->count; i++) {
            int rc = list->dev[i].type & t
                         ? add_device(list, text, tok, true, i, index, cap, count, e)
                         : BCL_OK;
            if (rc)
                return rc;
        }
        if (sel->kind == BCL_SEL_TYPE)
            break;
    }
    if (*count == before && list->count == 0)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "no OpenCL device found");
    return BCL_OK;
}

/* The one selector-list parser: bcl_device_select_list's rules, or with
 * every those of an MPI node (bcl_device_select_every). */
static int select_list(const bcl_device_list *list, const char *text, bool every, size_t *index,
                       size_t cap, size_t *count, bcl_error *e)
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
    int rc0;
    for (char *tok = buf, *next; tok; tok = next) {
        char *comma = strchr(tok, ',');
        next = comma ? comma + 1 : NULL;
        if (comma)
            *comma = '\0';
        if ((comma || tok != buf) && !*tok)
            return bcl_fail(e, BCL_EXIT_INPUT,
                            "device selector list '%s': an empty item: expected selectors "
                            "separated by single commas",
                            text);
        if (every && strcmp(tok, "all") == 0) {
            for (size_t i = 0; list && i < list->count; i++)
                if ((rc0 = add_device(list, text, tok, true, i, index, cap, count, e)))
                    return rc0;
            continue;
        }
        /* Inside a list "all" would name its devices twice: it stands alone. */
        if (strcmp(tok, "all") == 0)
            return bcl_fail(e, BCL_EXIT_INPUT,
                            "device selector list '%s': 'all' names every device and stands "
                            "alone: expected -d all, or a list of selectors without it",
                            text);
        bcl_selector sel;
        /* No text at all is the default device; an empty one is an error. */
        int rc = bcl_selector_parse(text ? tok : NULL, &sel, e);
        if (rc || !list)
            return rc;
        if (every && (sel.kind == BCL_SEL_TYPE || sel.kind == BCL_SEL_DEFAULT)) {
            rc = add_every(list, text, tok, &sel, index, cap, count, e);
        } else {
            size_t i;
            rc = bcl_selector_match(&sel, list, &i, e);
            if (rc == BCL_OK)
                rc = add_device(list, text, tok, every, i, index, cap, count, e);
        }
        if (rc)
            return rc;
    }
    return BCL_OK;
}

int bcl_device_select_list(const bcl_device_list *list, const char *text, size_t *index, size_t cap,
                           size_t *count, bcl_error *e)
{
    return select_list(list, text, false, index, cap, count, e);
}

int bcl_device_select_every(const bcl_device_list *list, const char *text, size_t *index,
                            size_t cap, size_t *count, bcl_error *e)
{
    return select_list(list, text, true, index, cap, count, e);
}
