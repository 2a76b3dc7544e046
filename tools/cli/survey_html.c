/*
 * ballcl survey report --html: one self-contained page of the fleet from
 * the survey database (docs/SURVEY.md, "The report page"): the style, a
 * small script and the charts (survey_html_charts.c) are inside it. Text
 * from survey files is escaped for HTML; the script's data is JSON inside
 * a non-executed <script> element.
 */
#include "survey_html.h"
#include "survey_db.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the data, from the database ------------------------------------------ */

/* Into run (a row with run_id): "facts" {key: value} with booleans as JSON
 * booleans, "figures" {key or model:key: value}, "extensions". */
static const char *const run_sets[] = {"facts", "figures", "extensions"};

static int page_load_run(report *r, json_t *run)
{
    static const char *const sql[] = {
        "SELECT key, type, value FROM facts WHERE run_id = ? ORDER BY key",
        "SELECT model, key, value FROM figures WHERE run_id = ? ORDER BY model, key",
        "SELECT name FROM extensions WHERE run_id = ? ORDER BY name"};
    long long id = json_integer_value(json_object_get(run, "run_id"));
    for (size_t k = 0; k < 3; k++) {
        json_t *rows, *row;
        int rc = survey_db_rows(r->db, r->path, r->e, sql[k], &rows, "i", id);
        if (rc)
            return rc;
        json_t *to = k == 2 ? json_array() : json_object();
        size_t i;
        json_array_foreach(rows, i, row)
        {
            json_t *v = json_object_get(row, "value");
            const char *key = page_str(row, "key"), *model = page_str(row, "model");
            char full[600];
            snprintf(full, sizeof full, "%s%s%s", model, *model ? ":" : "", key);
            if (k == 2)
                json_array_append(to, json_object_get(row, "name"));
            else if (k == 1)
                json_object_set(to, full, v);
            else if (strcmp(page_str(row, "type"), "bool") == 0)
                json_object_set_new(to, key, json_boolean(json_integer_value(v)));
            else
                json_object_set(to, key, v);
        }
        json_decref(rows);
        json_object_set_new(run, run_sets[k], to);
    }
    return BCL_OK;
}

/* Each device at its latest run, and every run, loaded, with its device's
 * number in the table ("number") and under that device's "runs" (oldest
 * first), for the histories and the side by side. */
static int load(report *r)
{
    /* The models are those with a penalty figure (its key from the figure table). */
    const struct {
        const char *sql;
        json_t **rows;
        const char *fmt;
    } query[] = {
        {"SELECT l.run_id, l.device_id, l.name, l.platform, l.vendor, l.type, l.driver, l.date,"
         " l.schema, (SELECT count(DISTINCT x.survey_id) FROM runs x WHERE x.device_id ="
         " l.device_id) AS surveys FROM latest_runs l ORDER BY l.type, l.name, l.device_id",
         &r->devices, ""},
        {"SELECT run_id, device_id, date, driver FROM device_runs ORDER BY device_id, date, run_id",
         &r->runs, ""},
        {"SELECT model FROM figures WHERE model <> '' AND key = ? GROUP BY model"
         " ORDER BY min(rowid)",
         &r->models, "s"},
        {"SELECT count(*) AS surveys, min(date) AS first, max(date) AS last FROM surveys",
         &r->totals, ""},
    };
    int rc = BCL_OK;
    for (size_t q = 0; rc == BCL_OK && q < sizeof query / sizeof query[0]; q++)
        rc = survey_db_rows(r->db, r->path, r->e, query[q].sql, query[q].rows, query[q].fmt,
                            bcl_survey_key(BCL_FIG_LOCAL1_PENALTY));
    size_t i, n;
    json_t *run, *d;
    json_array_foreach(r->devices, i, d) json_object_set_new(d, "runs", json_array());
    json_array_foreach(r->runs, i, run)
    {
        if (rc == BCL_OK)
            rc = page_load_run(r, run);
        json_t *id = json_object_get(run, "device_id");
        for (n = 0; (d = json_array_get(r->devices, n)); n++)
            if (json_equal(json_object_get(d, "device_id"), id))
                break;
        json_object_set_new(run, "number", json_integer((json_int_t)n + 1));
        json_array_append(json_object_get(d, "runs"), run);
        /* The device's latest run is one of them. */
        bool latest = json_equal(json_object_get(d, "run_id"), json_object_get(run, "run_id"));
        for (size_t k = 0; latest && k < 3; k++)
            json_object_set(d, run_sets[k], json_object_get(run, run_sets[k]));
    }
    if (rc == BCL_OK && json_array_size(r->devices) == 0)
        rc = bcl_fail(r->e, BCL_EXIT_INPUT,
                      "survey database '%s' holds no survey: add some with 'ballcl survey "
                      "import FILE.json'",
                      r->path);
    return rc;
}

/* ---- sections ---------------------------------------------------------------- */

typedef struct column {
    char head[96];
    const char *set; /* "facts" or "figures" */
    char key[160];   /* a model's figure: model:key */
    int decimals;    /* -1: page_num */
    double per;      /* the value shown is the stored one / per */
} column;

#define MAX_COLUMNS (3 + BCL_FIG_COUNT)

/* Three facts, then the figures marked for a column. Returns the count. */
static size_t device_columns(column *cols)
{
    static const column facts[] = {
        {"CUs", "facts", "limits.compute_units", 0, 1},
        {"clock MHz", "facts", "limits.clock_mhz", 0, 1},
        {"memory GiB", "facts", "limits.global_mem_bytes", 1, 1073741824.0},
    };
    size_t n = sizeof facts / sizeof facts[0];
    memcpy(cols, facts, sizeof facts);
    for (bcl_fig f = 0; f < BCL_FIG_COUNT; f++) {
        const bcl_survey_figure *g = &bcl_survey_figures[f];
        if (!(g->flags & BCL_FIG_COLUMN))
            continue;
        const char *model = g->flags & BCL_FIG_MODEL ? bcl_models[0]->name : NULL;
        column *c = &cols[n++];
        snprintf(c->head, sizeof c->head, "%s%s%s %s", model ? model : "", model ? " " : "",
                 g->title, g->unit);
        page_figure_key(f, model, c->key, sizeof c->key);
        c->set = "figures", c->decimals = -1, c->per = 1;
    }
    return n;
}

static void device_table(report *r, sbuf *p)
{
    sb_puts(p, "<h2 id=\"devices\">Devices</h2>\n<p>Each device at its latest survey. Click a "
               "heading to sort, a name for the device's section.</p>\n<p><input "
               "type=\"search\" id=\"search\" placeholder=\"search: name, host, driver…\" "
               "aria-label=\"search the devices\" size=\"40\"> <span id=\"search-count\">"
               "</span></p>\n<div class=\"scroll\"><table class=\"sortable\" "
               "id=\"device-table\"><thead><tr><th>#</th><th>device</th><th>platform</th>"
               "<th>type</th><th>driver</th><th>where</th>");
    column cols[MAX_COLUMNS];
    size_t ncols = device_columns(cols);
    for (size_t c = 0; c < ncols; c++)
        sb_printf(p, "<th class=\"num\">%s</th>", cols[c].head);
    sb_puts(p, "<th class=\"num\">surveys</th><th>latest</th></tr></thead><tbody>\n");
    size_t i;
    json_t *d;
    json_array_foreach(r->devices, i, d)
    {
        sb_printf(p,
                  "<tr><td data-v=\"%zu\">%zu</td><td class=\"device-name\"><a "
                  "href=\"#dev-%zu\">",
                  i + 1, i + 1, i + 1);
        page_fields(p, d,
                    (const char *const[]){"name", "</a></td><td>", "platform", "</td><td>", "type",
                                          "</td><td>", "driver", "</td><td>", NULL});
        page_where(p, d, "", true);
        sb_puts(p, "</td>");
        for (size_t c = 0; c < ncols; c++) {
            const column *col = &cols[c];
            double raw = page_raw(d, col->set, col->key);
            if (!isnan(raw) && !page_plausible(raw)) {
                /* Shown, and left out of the charts: the rest is drawn. */
                sb_printf(p,
                          "<td class=\"num invalid\" data-v=\"-1e300\" title=\"%g: not a "
                          "plausible figure; left out of the charts\">invalid</td>",
                          raw);
                continue;
            }
            double v = raw / col->per;
            char t[64] = "–";
            if (!isnan(v) && col->decimals >= 0)
                snprintf(t, sizeof t, "%.*f", col->decimals, v);
            else if (!isnan(v))
                page_num(v, t, sizeof t);
            sb_printf(p, "<td class=\"num\" data-v=\"%.9g\">%s</td>", isnan(v) ? -1e300 : v, t);
        }
        long long surveys = json_integer_value(json_object_get(d, "surveys"));
        sb_printf(p, "<td class=\"num\" data-v=\"%lld\">%lld</td><td title=\"", surveys, surveys);
        page_fields(p, d, (const char *const[]){"date", "\">", NULL});
        /* The date's first 10 characters, escaped whole (a date that is no
         * ISO time may hold any bytes; bcl_escape never cuts a character). */
        char day[64];
        bcl_escape(page_str(d, "date"), day, 11);
        sb_html(p, day);
        sb_puts(p, "</td></tr>\n");
    }
    sb_puts(p, "</tbody></table></div>\n");
}

#define COVERAGE_MARKS 30

/* One more of name in set (an object from name to its count), by add. */
static void tally(json_t *set, const char *name, int add)
{
    json_int_t had = json_integer_value(json_object_get(set, name));
    json_object_set_new(set, name, json_integer(had + add));
}

static void coverage(report *r, sbuf *p)
{
    size_t n = json_array_size(r->devices), i, x;
    json_t *sets[2] = {json_object(), json_object()}; /* capabilities, extensions */
    json_t *d, *v, *e;
    const char *k;
    json_array_foreach(r->devices, i, d)
    {
        json_object_foreach(json_object_get(d, "facts"), k, v)
        {
            if (json_is_boolean(v))
                tally(sets[0], k, json_is_true(v));
        }
        json_array_foreach(json_object_get(d, "extensions"), x, v)
        {
            if (json_is_string(v))
                tally(sets[1], json_string_value(v), 1);
        }
    }
    sb_printf(p,
              "<h2 id=\"coverage\">Coverage across the fleet</h2>\n<p>How many of the %zu "
              "devices (each at its latest survey) have each capability and extension.</p>\n"
              "<div class=\"scroll\"><table id=\"coverage-table\" class=\"sortable coverage\">"
              "<thead><tr><th>capability or extension</th><th class=\"num\">devices</th>"
              "<th>share</th>",
              n);
    /* A mark per device only while they fit a screen (1000: megabytes). */
    bool marks = n <= COVERAGE_MARKS;
    if (marks)
        json_array_foreach(r->devices, i, d) sb_printf(p, "<th class=\"num\">%zu</th>", i + 1);
    sb_puts(p, "</tr></thead><tbody>\n");
    for (int pass = 0; pass < 2; pass++) {
        json_object_foreach(sets[pass], k, v)
        {
            json_int_t c = json_integer_value(v);
            sb_printf(p, "<tr class=\"%s\"><td>", pass == 0 ? "cap" : "ext");
            sb_html(p, k);
            sb_printf(p,
                      "</td><td class=\"num\" data-v=\"%lld\">%lld / %zu</td><td data-v=\"%lld\">"
                      "<span class=\"bar\" style=\"width:%.0fpx\"></span></td>",
                      (long long)c, (long long)c, n, (long long)c, 120.0 * (double)c / (double)n);
            json_array_foreach(marks ? r->devices : NULL, i, d)
            {
                bool has =
                    pass == 0 && json_is_true(json_object_get(json_object_get(d, "facts"), k));
                json_array_foreach(pass ? json_object_get(d, "extensions") : NULL, x, e) has |=
                    strcmp(page_str(e, NULL), k) == 0;
                sb_printf(p, "<td class=\"mark\">%s</td>", has ? "✓" : "");
            }
            sb_puts(p, "</tr>\n");
        }
    }
    sb_puts(p, "</tbody></table></div>\n");
    json_decref(sets[0]);
    json_decref(sets[1]);
}

static int platforms(report *r, sbuf *p)
{
    json_t *rows;
    int rc =
        survey_db_rows(r->db, r->path, r->e,
                       "SELECT name, status, max(s.date) AS date FROM platforms pl JOIN surveys s"
                       " ON s.id = pl.survey_id GROUP BY name, status ORDER BY name",
                       &rows, "");
    if (rc)
        return rc;
    sb_puts(p, "<h2 id=\"platforms\">Platforms</h2>\n");
    if (json_array_size(rows) == 0)
        sb_puts(p, "<p class=\"none\">The surveys list no platforms of their own (schema 3 "
                   "does, with those that gave no device).</p>\n");
    else {
        sb_puts(p, "<table><thead><tr><th>platform</th><th>status</th><th>latest "
                   "survey</th></tr></thead><tbody>\n");
        size_t i;
        json_t *row;
        json_array_foreach(rows, i, row)
        {
            sb_puts(p, "<tr><td>");
            page_fields(p, row,
                        (const char *const[]){"name", "</td><td>", "status", "</td><td>", "date",
                                              "</td></tr>\n", NULL});
        }
        sb_puts(p, "</tbody></table>\n");
    }
    json_decref(rows);
    return BCL_OK;
}

/* The index of name in list (added when new), through the object index. */
static json_int_t index_of(json_t *list, json_t *index, const char *name)
{
    json_t *have = json_object_get(index, name);
    if (have)
        return json_integer_value(have);
    json_int_t n = (json_int_t)json_array_size(list);
    json_array_append_new(list, json_string(name));
    json_object_set_new(index, name, json_integer(n));
    return n;
}

/* Every survey as compact JSON for the side by side: the names of figures,
 * facts and extensions once ("keys", "ext"; a megabyte at 1000 surveys,
 * not four), and per run [device number, name, platform, type, driver,
 * date, where, [key index, value, ...], [extension index, ...]]; '<' as
 * \u003c so that no text can end the <script> element. */
static void embedded_data(report *r, sbuf *p)
{
    json_t *keys = json_array(), *key_index = json_object();
    json_t *exts = json_array(), *ext_index = json_object();
    json_t *runs = json_array(), *run;
    size_t i;
    json_array_foreach(r->runs, i, run)
    {
        json_t *number = json_object_get(run, "number");
        const json_t *dev = json_array_get(r->devices, (size_t)json_integer_value(number) - 1);
        /* What tells the device apart from others of its name, plain text. */
        sbuf where = {0};
        double cu = page_value(run, "facts", "limits.compute_units");
        if (!isnan(cu))
            sb_printf(&where, "%.0f CUs", cu);
        page_where(&where, run, where.len ? ", " : "", false);
        json_t *vals = json_array(), *xs = json_array();
        static const char *const sets[][2] = {{"figures", "figure "}, {"facts", ""}};
        for (size_t s = 0; s < 2; s++) {
            const char *k;
            json_t *v;
            json_object_foreach(json_object_get(run, sets[s][0]), k, v)
            {
                char name[600];
                snprintf(name, sizeof name, "%s%s", sets[s][1], k);
                json_array_append_new(vals, json_integer(index_of(keys, key_index, name)));
                json_array_append(vals, v);
            }
        }
        size_t x;
        json_t *e;
        json_array_foreach(json_object_get(run, "extensions"), x, e)
            json_array_append_new(xs, json_integer(index_of(exts, ext_index, page_str(e, NULL))));
        json_t *row =
            json_pack("[O,s,s,s,s,s,s,O,O]", number, page_str(dev, "name"),
                      page_str(dev, "platform"), page_str(dev, "type"), page_str(run, "driver"),
                      page_str(run, "date"), where.s ? where.s : "", vals, xs);
        p->oom |= where.oom || !row;
        free(where.s);
        json_decref(vals);
        json_decref(xs);
        json_array_append_new(runs, row);
    }
    json_t *out = json_pack("{s:o,s:o,s:o}", "keys", keys, "ext", exts, "runs", runs);
    json_decref(key_index);
    json_decref(ext_index);
    char *text =
        out ? json_dumps(out, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(7)) : NULL;
    json_decref(out);
    if (!text) {
        p->oom = true;
        return;
    }
    sb_puts(p, "<script type=\"application/json\" id=\"survey-data\">");
    for (const char *c = text; *c; c++)
        sb_add(p, *c == '<' ? "\\u003c" : c, *c == '<' ? 6 : 1);
    sb_puts(p, "</script>\n");
    free(text);
}

static const char *const style =
    "<style>\n"
    "body{font-family:sans-serif;margin:1.5em;color:#222;max-width:1400px}\n"
    "h1{font-size:1.5em}h2{margin-top:2em;border-bottom:1px solid #ccc}\n"
    "table{border-collapse:collapse;font-size:0.85em}\n"
    "th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}\n"
    "th{background:#f2f2f2}table.sortable th{cursor:pointer}\n"
    "th.sorted-asc::after{content:' \\25B2'}th.sorted-desc::after{content:' \\25BC'}\n"
    ".num{text-align:right}.mark{text-align:center;color:#185}\n"
    ".scroll{overflow-x:auto}.none{color:#777;font-style:italic}\n"
    ".bar{display:inline-block;height:0.8em;background:#4a7ab5}\n"
    "figure.chart{margin:1.5em 0}figcaption{font-weight:bold;margin-bottom:0.3em}\n"
    "tr.differs td{background:#fff6d8}select{font-size:1em;margin-right:1em}\n"
    "nav a{margin-right:1em}\n"
    /* Sections off screen are laid out only when scrolled to (1000: seconds). */
    "section.device{border-top:1px solid #eee;padding:0.2em 0;content-visibility:auto;"
    "contain-intrinsic-size:auto 90px}h3{font-size:1em;margin:0.4em 0}\n"
    "svg.spark{margin:0 6px 4px 0;font-size:10px;background:#fafafa}"
    "svg.spark .axis{stroke:#999}svg.spark .band{fill:#ddd}svg.spark .r{text-anchor:end}\n"
    "svg.spark polyline{fill:none;stroke:#4a7ab5;stroke-width:1.5}"
    "figure.history{margin:0.3em 0}figure.history figcaption{font-weight:normal;"
    "font-size:0.85em}.drivers{font-size:0.85em;color:#555}\n"
    "</style>\n";

/* Sorting a table.sortable by its headings, the side by side, the search. */
static const char *const script =
    "<script>\n"
    "'use strict';\n"
    "function cellValue(td){const v=td.getAttribute('data-v');"
    "if(v!==null&&v!==''&&!isNaN(Number(v)))return Number(v);return td.textContent;}\n"
    "document.querySelectorAll('table.sortable').forEach(function(table){\n"
    " table.querySelectorAll('thead th').forEach(function(th,col){\n"
    "  th.addEventListener('click',function(){\n"
    "   const asc=!th.classList.contains('sorted-asc');\n"
    "   table.querySelectorAll('thead th').forEach(function(h){h.classList.remove('sorted-asc',"
    "'sorted-desc');});\n"
    "   th.classList.add(asc?'sorted-asc':'sorted-desc');\n"
    "   const body=table.tBodies[0];const rows=Array.from(body.rows);\n"
    "   rows.sort(function(a,b){const x=cellValue(a.cells[col]),y=cellValue(b.cells[col]);\n"
    "    const c=(typeof x==='number'&&typeof y==='number')?x-y:String(x).localeCompare("
    "String(y));return asc?c:-c;});\n"
    "   rows.forEach(function(r){body.appendChild(r);});});});});\n"
    "const data=JSON.parse(document.getElementById('survey-data').textContent);\n"
    "const runs=data.runs;\n"
    "const selA=document.getElementById('pick-a'),selB=document.getElementById('pick-b');\n"
    "const opts=document.createDocumentFragment();\n"
    "runs.forEach(function(u,i){const o=document.createElement('option');o.value=i;"
    "o.textContent=u[0]+'. '+u[1]+' — '+u[4]+(u[6]?', '+u[6]:'')+', '+u[5];"
    "opts.appendChild(o);});\n"
    "selA.appendChild(opts.cloneNode(true));selB.appendChild(opts);\n"
    /* The second pick: another survey of the first device where there is
     * one (the device across drivers or time), else the next survey. */
    "if(runs.length>1){let j=1;for(let k=1;k<runs.length;k++)if(runs[k][0]===runs[0][0]){j=k;"
    "break;}selB.value=j;}\n"
    "function show(v){if(v===undefined||v===null)return '–';if(typeof v==='number')"
    "return Number.isInteger(v)?String(v):v.toPrecision(5);return String(v);}\n"
    "function values(u){const m=new Map();for(let k=0;k<u[7].length;k+=2)"
    "m.set(data.keys[u[7][k]],u[7][k+1]);return m;}\n"
    "function compare(){\n"
    " const a=runs[selA.value],b=runs[selB.value];\n"
    " const body=document.querySelector('#compare-table tbody');body.textContent='';\n"
    " function row(group,key,x,y){const tr=document.createElement('tr');\n"
    "  if(show(x)!==show(y))tr.className='differs';\n"
    "  [group,key,show(x),show(y)].forEach(function(t){const td=document.createElement('td');"
    "td.textContent=t;tr.appendChild(td);});body.appendChild(tr);}\n"
    " ['name','platform','type','driver','date','compute units, where'].forEach(function(k,i){"
    "row('device',k,a[i+1],b[i+1]);});\n"
    " const va=values(a),vb=values(b);\n"
    " Array.from(new Set(Array.from(va.keys()).concat(Array.from(vb.keys())))).sort()"
    ".forEach(function(k){const f=k.startsWith('figure ');"
    "row(f?'figure':'fact',f?k.slice(7):k,va.get(k),vb.get(k));});\n"
    " const ea=new Set(a[8]),eb=new Set(b[8]);\n"
    " Array.from(new Set(a[8].concat(b[8]))).map(function(x){return data.ext[x];}).sort()"
    ".forEach(function(x){const i=data.ext.indexOf(x);"
    "row('extension',x,ea.has(i)?'yes':'no',eb.has(i)?'yes':'no');});\n"
    "}\n"
    "selA.addEventListener('change',compare);selB.addEventListener('change',compare);\n"
    /* The search: the device rows and sections holding every word typed. */
    "const search=document.getElementById('search');\n"
    "search.addEventListener('input',function(){\n"
    " const words=search.value.toLowerCase().split(/\\s+/).filter(Boolean);let n=0;\n"
    " function hit(el){const t=el.textContent.toLowerCase();"
    "return words.every(function(w){return t.includes(w);});}\n"
    " document.querySelectorAll('#device-table tbody tr').forEach(function(tr){"
    "const h=hit(tr);tr.style.display=h?'':'none';n+=h;});\n"
    " document.querySelectorAll('section.device').forEach(function(s){"
    "s.style.display=hit(s)?'':'none';});\n"
    " document.getElementById('search-count').textContent=words.length?n+' shown':'';});\n"
    "compare();\n"
    "</script>\n";

int survey_html_page(sqlite3 *db, const char *path, char **html, size_t *len, bcl_error *e)
{
    report r = {.db = db, .path = path, .e = e};
    sbuf p = {0};
    int rc = load(&r);
    char now[32];
    time_t t = time(NULL);
    struct tm tm;
    strftime(now, sizeof now, "%Y-%m-%d %H:%M UTC", gmtime_r(&t, &tm));
    if (rc == BCL_OK) {
        const json_t *row = json_array_get(r.totals, 0);
        sb_puts(&p, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                    "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
                    "<title>ballcl device survey</title>\n");
        sb_puts(&p, style);
        sb_puts(&p, "</head><body>\n<h1>ballcl device survey</h1>\n<p>");
        sb_printf(&p, "%zu devices from %lld surveys (", json_array_size(r.devices),
                  (long long)json_integer_value(json_object_get(row, "surveys")));
        page_fields(&p, row, (const char *const[]){"first", " to ", "last", "", NULL});
        sb_printf(&p, "); page made %s by ballcl %s from the survey database <code>", now,
                  BALLCL_VERSION);
        sb_html(&p, path);
        sb_puts(&p, "</code>. The figures and how they are measured: docs/SURVEY.md.</p>\n"
                    "<nav><a href=\"#devices\">devices</a><a href=\"#charts\">figures</a>"
                    "<a href=\"#compare\">side by side</a><a href=\"#coverage\">coverage</a>"
                    "<a href=\"#history\">each device</a><a href=\"#platforms\">platforms</a>"
                    "</nav>\n");
    }
    if (rc == BCL_OK) {
        device_table(&r, &p);
        rc = survey_page_charts(&r, &p);
    }
    if (rc == BCL_OK) {
        sb_puts(&p, "<h2 id=\"compare\">Side by side</h2>\n<p>Any two surveys of any "
                    "devices (one device across drivers, hosts or time too); rows that differ "
                    "are marked.</p>\n<p><select id=\"pick-a\" "
                    "aria-label=\"first survey\"></select><select id=\"pick-b\" "
                    "aria-label=\"second survey\"></select></p>\n<div class=\"scroll\"><table "
                    "id=\"compare-table\"><thead><tr><th>what</th><th>key</th><th>first</th>"
                    "<th>second</th></tr></thead><tbody></tbody></table></div>\n");
        coverage(&r, &p);
        survey_page_devices(&r, &p);
    }
    if (rc == BCL_OK)
        rc = platforms(&r, &p);
    if (rc == BCL_OK) {
        embedded_data(&r, &p);
        sb_puts(&p, script);
        sb_puts(&p, "</body></html>\n");
    }
    json_decref(r.devices);
    json_decref(r.models);
    json_decref(r.runs);
    json_decref(r.totals);
    if (rc == BCL_OK && p.oom)
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    if (rc)
        free(p.s);
    *html = rc ? NULL : p.s;
    *len = rc ? 0 : p.len;
    return rc;
}
