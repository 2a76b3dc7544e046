/*
 * Fuzz target: the survey reader (bcl_survey_read, src/survey/survey_read.c) on
 * arbitrary bytes, as `ballcl survey compare` reads files it is given.
 * Invariants (abort on violation):
 *   - the result is BCL_OK or BCL_EXIT_INPUT; a refusal is one non-empty
 *     line that names the file, and hands out no document;
 *   - an accepted document is an object with "schema" equal to
 *     BCL_SURVEY_SCHEMA or an older one (_V2, _V1), and a non-empty
 *     "devices" array, and what it dumps
 *     back to text is accepted again (the reader is stable on its own
 *     output).
 */
#include "run/run.h"
#include "measure/timing.h"
#include "models/rng.h"
#include "files/files.h"
#include "survey/survey.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(int ok, const char *what, const bcl_error *e)
{
    if (!ok) {
        fprintf(stderr, "fuzz_survey: invariant broken: %s (message \"%s\")\n", what, e->msg);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bcl_error e = {0};
    json_t *doc = (json_t *)(uintptr_t)0x10;
    int rc = bcl_survey_read((const char *)data, size, "fuzz.json", &doc, &e);
    if (rc != BCL_OK) {
        check(rc == BCL_EXIT_INPUT && e.code == rc, "wrong exit class", &e);
        check(e.msg[0] && !strchr(e.msg, '\n') && strstr(e.msg, "'fuzz.json'"),
              "message empty, not one line, or not naming the file", &e);
        check(doc == NULL, "a document handed out with an error", &e);
        bcl_error_clear(&e);
        return 0;
    }
    check(json_is_object(doc), "accepted a non-object", &e);
    const char *schema = json_string_value(json_object_get(doc, "schema"));
    check(schema && (strcmp(schema, BCL_SURVEY_SCHEMA) == 0 ||
                     strcmp(schema, BCL_SURVEY_SCHEMA_V2) == 0 ||
                     strcmp(schema, BCL_SURVEY_SCHEMA_V1) == 0),
          "accepted another schema", &e);
    check(json_array_size(json_object_get(doc, "devices")) > 0, "accepted no devices", &e);
    char *text = json_dumps(doc, JSON_PRESERVE_ORDER);
    check(text != NULL, "cannot dump an accepted document", &e);
    json_t *again = NULL;
    check(bcl_survey_read(text, strlen(text), "again.json", &again, &e) == BCL_OK,
          "its own dump is refused", &e);
    check(json_equal(doc, again), "the dump reads back different", &e);
    json_decref(again);
    free(text);
    json_decref(doc);
    return 0;
}
