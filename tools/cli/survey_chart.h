/* The report page's charts drawn by gnuplot (survey_chart.c). */
#ifndef BALLCL_SURVEY_CHART_H
#define BALLCL_SURVEY_CHART_H

#include "cli.h"

/* One chart: gnuplot runs script (which must not set the terminal or the
 * output: this does, SVG of width x height) with the data file `data`
 * written beside it as "data.txt" (the script reads it by that name) and
 * *svg gets the <svg> element (malloc'ed), its ids prefixed with id_prefix
 * so that several charts live in one page. A missing gnuplot is a runtime
 * error saying so. */
int survey_chart_svg(const char *script, const char *data, unsigned width, unsigned height,
                     const char *id_prefix, char **svg, bcl_error *e);

#endif
