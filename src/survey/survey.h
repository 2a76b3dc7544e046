/* The survey's internal helpers, shared by its measuring, describing and
 * reading parts (public API in ballcl.h). */
#ifndef BALLCL_SURVEY_H
#define BALLCL_SURVEY_H

#include "ballcl/ballcl.h"

#include <jansson.h>

/* A JSON string of s with every byte that is not part of valid UTF-8
 * replaced by '?' (json_string refuses such text, and a driver's strings
 * are not ours to trust). NULL only when out of memory. */
json_t *bcl_survey_text(const char *s);

#endif
