/* ballcl survey report --html: the fleet's page (survey_html.c; its parts
 * share survey_page.h, its charts are drawn by survey_chart.h). */
#ifndef BALLCL_SURVEY_HTML_H
#define BALLCL_SURVEY_HTML_H

#include "cli.h"

#include <sqlite3.h>

/* The whole page from the database at db (path names it in messages), in
 * *html (malloc'ed, *len bytes). */
int survey_html_page(sqlite3 *db, const char *path, char **html, size_t *len, bcl_error *e);

#endif
