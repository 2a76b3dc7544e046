/* ballcl survey: surveys as a Markdown table (survey_report.c). */
#ifndef BALLCL_SURVEY_REPORT_H
#define BALLCL_SURVEY_REPORT_H

#include "cli.h"

/* Prints the devices of docs (ndocs checked survey documents) side by side
 * on stdout: one column per device, one row per figure, then footnotes
 * with the error of every figure that is null and the rule of every
 * flagged one. labels[i] (optional, e.g. the file name) is added to the
 * heads of doc i's columns. Returns -1 when out of memory, else 0. */
int survey_print_table(json_t *const *docs, const char *const *labels, size_t ndocs);

/* The value at a dot-separated path of keys under obj; NULL if none. */
const json_t *survey_at(const json_t *obj, const char *path);

#endif
