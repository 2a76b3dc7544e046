/* The survey, internal side: its JSON document (jansson), for its parts and
 * the tests; the public side (bcl_survey_run) hands documents out as text. */
#ifndef BALLCL_SURVEY_H
#define BALLCL_SURVEY_H

#include "measure/measure.h"

#include <jansson.h>

/* A JSON string of s, every byte not of valid UTF-8 replaced by '?'
 * (json_string refuses such text). NULL only when out of memory. */
json_t *bcl_survey_text(const char *s);

/* The "large" N for d: 16M balls, 4M on a CPU, 64K with quick; within one
 * allocation and a quarter of the device's memory, at least small_n. */
size_t bcl_survey_large_n(const bcl_device_info *d, const bcl_survey_opts *o);
/* The N of the fused figure: 65536 per compute unit, at least sweep_n, at
 * most the large N (a k-step launch costs K one-step ones: large would take
 * minutes on a CPU for a rate that stops changing once the device is full). */
size_t bcl_survey_fused_n(const bcl_device_info *d, const bcl_survey_opts *o);

/* The document's head and settings, "devices" empty. NULL: out of memory. */
json_t *bcl_survey_document(const bcl_survey_opts *o);
/* A new device object (NULL: no memory) with d's "identity" and "limits", no calls
 * (extensions CL_DEVICE_EXTENSIONS or NULL, pm the preferred multiple or 0). */
json_t *bcl_survey_device_info(const bcl_device_info *d, const char *extensions, size_t pm);
/* Whether word is one of the space-separated names of list. */
bool bcl_survey_listed(const char *list, const char *word);
/* identity.host, .uuid and .pci_bus where known: what keeps identical
 * nodes, and identical GPUs of one node, apart. */
void bcl_survey_device_place(json_t *dev, const bcl_device_info *d, const char *extensions,
                             const char *host);
/* d's "capabilities" (device_facts.c), a failed query null; NULL: no memory. */
json_t *bcl_survey_capabilities(const bcl_device_info *d);
/* Every device key clinfo --raw prints, under its CL_... name
 * (clinfo_keys.c), a refused query left out; NULL: no memory. */
json_t *bcl_survey_clinfo(const bcl_device_info *d, const char *extensions);
/* One of those keys by name: null when the driver refuses it, or it is of
 * OpenCL 2.0 or later and the device older (1.x ones are always asked). */
json_t *bcl_survey_clinfo_value(const bcl_device_info *d, const char *name);
/* Every OpenCL platform, with clGetDeviceIDs' status and a hint for drivers
 * known to need a setting, as a new JSON array. */
int bcl_survey_platforms(json_t **out, bcl_error *e);
/* Adds to dev's "flags" every figure above a plausible peak
 * (docs/SURVEY.md); returns their number. */
size_t bcl_survey_flag(json_t *dev);

/* Parses and checks the survey in buf (survey_read.c), name labelling the
 * messages: BCL_EXIT_INPUT on any defect, else *out (the caller decrefs). */
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

/* One figure: its key (dotted, under "measured" or a model's object), unit,
 * the table's label, the page's title and chart (NULL: none), +1 when more
 * is better and -1 when less is, the schema version that added it, flags. */
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
/* d's "selector", "identity", "limits" and "capabilities" as a survey
 * records them, unmeasured (`ballcl devices`). NULL when out of memory. */
json_t *bcl_survey_describe(const bcl_device_info *d);
/* Reads and checks (bcl_survey_read) the survey file at path; *json is its
 * text (malloc'ed, NUL-terminated). */
int bcl_survey_load(const char *path, char **json, bcl_error *e);

#endif
