/* The survey, internal side: the JSON document it builds (jansson), shared
 * by its measuring, describing and reading parts and by the tests. The
 * public side (bcl_survey_run, ballcl/ballcl.h) hands documents out as text. */
#ifndef BALLCL_SURVEY_H
#define BALLCL_SURVEY_H

#include "measure/measure.h"

#include <jansson.h>

/* A JSON string of s with every byte that is not part of valid UTF-8
 * replaced by '?' (json_string refuses such text, and a driver's strings
 * are not ours to trust). NULL only when out of memory. */
json_t *bcl_survey_text(const char *s);

/* The "large" N for d: 16M balls (256 MiB) on a GPU or accelerator, 4M
 * (64 MiB) on a CPU, 64K with quick; never more than one allocation
 * (max_alloc) or a quarter of the device's memory holds, at least small_n. */
size_t bcl_survey_large_n(const bcl_device_info *d, const bcl_survey_opts *o);
/* The N of the fused figure: enough balls to fill the device (65536 per
 * compute unit), at least sweep_n, at most the large N. A k-step launch
 * costs K times a one-step one, so N = large would take minutes on a CPU
 * for a rate that no longer changes with N once the device is full. */
size_t bcl_survey_fused_n(const bcl_device_info *d, const bcl_survey_opts *o);

/* The document without devices: schema, version, date, command, settings
 * and an empty "devices" array. NULL when out of memory. */
json_t *bcl_survey_document(const bcl_survey_opts *o);
/* Identity and limits of d as the survey's "identity" and "limits"
 * objects, in a new device object (no device calls: extensions is the
 * CL_DEVICE_EXTENSIONS text or NULL, pm the preferred multiple or 0 when
 * unknown). Strings that are not valid UTF-8 have their bad bytes replaced
 * by '?', so the JSON is always valid. NULL when out of memory. */
json_t *bcl_survey_device_info(const bcl_device_info *d, const char *extensions, size_t pm);
/* True when word is one of the space-separated names in list (an
 * extension string). */
bool bcl_survey_listed(const char *list, const char *word);
/* identity.host (when host is set), identity.uuid and identity.pci_bus
 * (when the driver lists cl_khr_device_uuid / cl_khr_pci_bus_info): what
 * keeps identical nodes and identical GPUs of one node apart. */
void bcl_survey_device_place(json_t *dev, const bcl_device_info *d, const char *extensions,
                             const char *host);
/* The device's capabilities (src/survey/device_facts.c): floating-point
 * configuration, SVM, caches, vector widths, sub-groups, IL version...; a
 * query that fails is null. NULL only when out of memory. */
json_t *bcl_survey_capabilities(const bcl_device_info *d);
/* Every device key clinfo --raw prints, under its CL_... name, as clinfo
 * would query it (src/survey/clinfo_keys.c): a new object, a query the
 * driver refuses left out; extensions is the CL_DEVICE_EXTENSIONS text.
 * NULL only when out of memory. */
json_t *bcl_survey_clinfo(const bcl_device_info *d, const char *extensions);
/* One of those keys, by its CL_... name, queried the same way: null when
 * the driver refuses it, or it is of OpenCL 2.0 or later and the device
 * is older (a query of OpenCL 1.x is asked of any device). */
json_t *bcl_survey_clinfo_value(const bcl_device_info *d, const char *name);
/* Every OpenCL platform, those without devices included, with the status
 * of clGetDeviceIDs and a hint for drivers known to need a setting, as a
 * new JSON array (empty when there is no platform). */
int bcl_survey_platforms(json_t **out, bcl_error *e);
/* Surveys one device into a new device object (*out); see bcl_survey_run.
 * *status is the worst outcome of its figures. Returns non-zero only when
 * out of memory. */
int bcl_survey_device(const bcl_device_info *d, const bcl_survey_opts *o, json_t **out, int *status,
                      bcl_error *e);
/* Adds to dev's "flags" every figure above a plausible peak (the rules of
 * docs/SURVEY.md); returns the number of flags. */
size_t bcl_survey_flag(json_t *dev);

/* Parses and checks a survey held in buf (len bytes, no NUL needed): valid
 * JSON, schema BCL_SURVEY_SCHEMA, every required key with its type. name
 * labels the messages. BCL_EXIT_INPUT with a one-line message on any
 * defect; else *out is the document (the caller decrefs it). */
int bcl_survey_read(const char *buf, size_t len, const char *name, json_t **out, bcl_error *e);

/* ---- the figures (src/survey/figures.c) ---------------------------------- */

typedef enum {
    BCL_FIG_BUILD_COLD,
    BCL_FIG_BUILD_CACHED,
    BCL_FIG_LATENCY,
    BCL_FIG_ROUNDTRIP,
    BCL_FIG_COPY,
    BCL_FIG_READ_ONLY,
    BCL_FIG_ADD,
    BCL_FIG_FMA,
    BCL_FIG_INT_ADD,
    BCL_FIG_FP64,
    BCL_FIG_HALF,
    BCL_FIG_WRITE,
    BCL_FIG_READ,
    BCL_FIG_TRANSFER, /* the six of "transfer": pinned, pageable, mapped; write, read */
    BCL_FIG_LARGE_RATE = BCL_FIG_TRANSFER + 6,
    BCL_FIG_BEST_LOCAL,
    BCL_FIG_LOCAL1_PENALTY,
    BCL_FIG_FUSED,
    BCL_FIG_COUNT
} bcl_fig;

enum {
    BCL_FIG_ROW = 1,      /* a row of the survey's table */
    BCL_FIG_MODEL = 2,    /* each model's: under the model's object, not "measured" */
    BCL_FIG_OPTIONAL = 4, /* may be absent (null or left out on a device without the type) */
    BCL_FIG_COLUMN = 8,   /* a column of the report page's device table */
    BCL_FIG_HISTORY = 16, /* drawn in a device's history on the page */
    BCL_FIG_CHECK = 32,   /* compared with the fleet by `survey check` */
    BCL_FIG_GB = 64,      /* flagged above the plausible GB/s */
    BCL_FIG_PEAK = 128,   /* flagged above the plausible operations per clock */
    BCL_FIG_PEAK2 = 256,  /* the same, doubled (packed half) */
    BCL_FIG_RATE = 512,   /* flagged above the plausible ball-steps/s of its model */
};

/* One figure: its key (dotted path under "measured", or under a model's
 * object), unit, the table's label, the page's short title, the page's
 * chart (NULL: none), +1 when more is better and -1 when less is, the
 * schema version that added it, and BCL_FIG_ flags. */
typedef struct bcl_survey_figure {
    const char *key, *unit, *label, *title, *group;
    int better;
    unsigned since, flags;
} bcl_survey_figure;

extern const bcl_survey_figure bcl_survey_figures[BCL_FIG_COUNT];
/* The figure's key (bcl_survey_figures[f].key). */
const char *bcl_survey_key(bcl_fig f);

/* ---- what tools/ and the tests use beside the installed header ---------- */

/* Turns the drivers' own program caches off for this process
 * (POCL_KERNEL_CACHE=0, CUDA_CACHE_DISABLE=1), leaving any value the user
 * set, and writes what holds into note. Must run before the first OpenCL
 * call: drivers read these once, when they start. */
void bcl_survey_driver_caches_off(char *note, size_t size);
/* The facts of device d as a survey records them, without measuring: a
 * new JSON object with "selector", "identity", "limits" and "capabilities"
 * (docs/SURVEY.md); `ballcl devices` shows these. NULL when out of memory. */
json_t *bcl_survey_describe(const bcl_device_info *d);
/* Reads the survey file at path and checks it (valid JSON, the schema,
 * every required key with its type); *json is its text (malloc'ed,
 * NUL-terminated). BCL_EXIT_INPUT with a one-line message on any defect. */
int bcl_survey_load(const char *path, char **json, bcl_error *e);

#endif
