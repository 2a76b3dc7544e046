/*
 * A device as the JSON object of `ballcl devices --json`: the one place
 * that says which fields a device has, so that the program and an
 * embedding program (the Python module's ballcl.devices()) give the same
 * fields, and a field added here reaches both.
 */
#include "ocl/ocl.h"
#include "survey/survey.h"

#include <stdlib.h>
#include <string.h>

/* The extensions as a JSON array of names (empty when the query failed). */
static json_t *extensions_json(const char *ext)
{
    json_t *arr = json_array();
    for (const char *p = ext; p && *p;) {
        size_t n = strcspn(p, " \t\n");
        if (n)
            json_array_append_new(arr, json_stringn(p, n));
        p += n + (p[n] != '\0'); /* past the name and one separator */
    }
    return arr;
}

/* Driver strings are not always UTF-8 (json_string refuses those): bytes
 * that are not are kept as \xNN text. */
static json_t *text(const char *s)
{
    json_t *j = json_string(s);
    if (j)
        return j;
    char esc[1024];
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && o + 5 < sizeof esc; p++)
        o += (size_t)snprintf(esc + o, sizeof esc - o, *p < 0x80 ? "%c" : "\\x%02x", *p);
    esc[o] = '\0';
    return json_string(esc);
}

static json_t *device_json(const bcl_device_info *d, bool is_default, const char *ext)
{
    char sel[32];
    snprintf(sel, sizeof sel, "%u:%u", d->platform_index, d->device_index);
    typedef json_int_t I;
    json_t *j = json_pack(
        "{s:s, s:b, s:o, s:o, s:o, s:s, s:I, s:I, s:I, s:o, s:o, s:o, s:I, s:I, s:I, s:o, "
        "s:[I, I, I], s:I, s:b, s:b, s:o}",
        "selector", sel, "default", is_default, "platform", text(d->platform_name), "name",
        text(d->name), "vendor", text(d->vendor), "type", bcl_device_type_name(d->type),
        "compute_units", (I)d->compute_units, "global_mem_bytes", (I)d->global_mem,
        "max_alloc_bytes", (I)d->max_alloc, "version", text(d->version), "opencl_c_version",
        text(d->c_version), "driver", text(d->driver), "max_work_group_size", (I)d->max_work_group,
        "clock_mhz", (I)d->clock_mhz, "local_mem_bytes", (I)d->local_mem, "preferred_multiple",
        d->preferred_multiple ? json_integer((I)d->preferred_multiple) : json_null(),
        "max_work_item_sizes", (I)d->max_item_sizes[0], (I)d->max_item_sizes[1],
        (I)d->max_item_sizes[2], "native_vector_width_float", (I)d->native_vector_width_float,
        "fp64", d->fp64, "fp16", d->fp16, "extensions", extensions_json(ext));
    if (!j)
        return NULL;
    /* The survey's objects, under its keys (docs/SURVEY.md): identity,
     * limits and capabilities, as a survey records them. */
    json_t *facts = bcl_survey_describe(d);
    static const char *const parts[] = {"identity", "limits", "capabilities"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        json_t *part = json_object_get(facts, parts[i]);
        json_object_set(j, parts[i], part ? part : json_null());
    }
    json_decref(facts);
    return j;
}

char *bcl_device_json(const bcl_device_info *d, bool is_default, bcl_error *e)
{
    /* A failed extension query leaves the list empty, as it always has:
     * the other fields are still worth having. */
    bcl_error xe = {0};
    char *ext = bcl_device_extensions(d, &xe);
    bcl_error_clear(&xe);
    json_t *j = device_json(d, is_default, ext);
    free(ext);
    char *out = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    if (!out)
        bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory encoding device '%s' as JSON", d->name);
    return out;
}
