/*
 * Scanning a user model's source (OpenCL C or C) before anything compiles
 * it: the literals (a double literal would make the C reference compute in
 * double where the device computes in float, a mismatch the user could not
 * explain) and update's signature (so that the wrappers and the driver
 * call it right, and the error names the file's line rather than the
 * wrapper's).
 *
 * A light tokenizer, not a C parser: the text is first spliced (every
 * backslash-newline removed, as translation phase 2 does) with a map back
 * to the file's offsets for positions; then comments, string and character
 * literals are skipped, identifiers and preprocessing numbers are tokens,
 * and every other character is a punctuator of its own.
 */
#include "models/models.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { TOK_END, TOK_IDENT, TOK_NUMBER, TOK_PUNCT } tok_kind;

typedef struct tok {
    tok_kind kind;
    size_t start, len; /* in the spliced text */
} tok;

typedef struct lexer {
    const char *text; /* the file, for positions */
    char *s;          /* spliced text, NUL-terminated */
    size_t *at;       /* at[i]: the file offset of s[i] */
    size_t len, pos;
    bool bol;      /* nothing but blanks since the last newline: a '#' starts a directive */
    bool skip_all; /* skip every directive, not only #pragma, #include and #line */
} lexer;

static int lexer_open(lexer *l, const char *text, size_t len, bool skip_all, const char *path,
                      bcl_error *e)
{
    memset(l, 0, sizeof *l);
    l->text = text;
    l->s = malloc(len + 1);
    l->at = malloc((len + 1) * sizeof *l->at);
    if (!l->s || !l->at) {
        free(l->s);
        free(l->at);
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory scanning '%s'", path);
    }
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        size_t nl = text[i] == '\\' && i + 1 < len && text[i + 1] == '\n' ? 1
                    : text[i] == '\\' && i + 2 < len && text[i + 1] == '\r' && text[i + 2] == '\n'
                        ? 2
                        : 0;
        if (nl) {
            i += nl;
            continue;
        }
        l->s[o] = text[i];
        l->at[o++] = i;
    }
    l->s[o] = '\0';
    l->at[o] = len;
    l->len = o;
    l->bol = true;
    l->skip_all = skip_all;
    return BCL_OK;
}

static void lexer_close(lexer *l)
{
    free(l->s);
    free(l->at);
}

/* The 1-based line and column (in bytes) of s[i] in the file. */
static void position(const lexer *l, size_t i, unsigned *line, unsigned *col)
{
    size_t off = l->at[i];
    unsigned ln = 1, c = 1;
    for (size_t k = 0; k < off; k++) {
        if (l->text[k] == '\n') {
            ln++;
            c = 1;
        } else
            c++;
    }
    *line = ln;
    *col = c;
}

static bool ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool ident_char(char c)
{
    return ident_start(c) || (c >= '0' && c <= '9');
}

static bool digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Past a comment starting at pos, if one does: true when it skipped one. */
static bool skip_comment(lexer *l)
{
    const char *s = l->s;
    size_t p = l->pos;
    if (s[p] != '/' || (s[p + 1] != '/' && s[p + 1] != '*'))
        return false;
    if (s[p + 1] == '/') {
        while (s[p] && s[p] != '\n')
            p++;
    } else {
        p += 2;
        while (s[p] && !(s[p] == '*' && s[p + 1] == '/'))
            p++;
        p += s[p] ? 2 : 0; /* unterminated: the compiler says so */
    }
    l->pos = p;
    return true;
}

/* Past a string or character literal starting at pos (its quote), escapes
 * included; one left open ends at the line's end, as the compiler's would. */
static void skip_quoted(lexer *l)
{
    const char *s = l->s;
    char q = s[l->pos];
    size_t p = l->pos + 1;
    while (s[p] && s[p] != q && s[p] != '\n')
        p += s[p] == '\\' && s[p + 1] ? 2 : 1;
    l->pos = p + (s[p] == q);
}

/* Past the rest of a directive's line (its comments may span lines). */
static void skip_directive(lexer *l)
{
    while (l->s[l->pos] && l->s[l->pos] != '\n') {
        if (skip_comment(l))
            continue;
        if (l->s[l->pos] == '"' || l->s[l->pos] == '\'')
            skip_quoted(l);
        else
            l->pos++;
    }
}

/* Whether the directive named at pos (after the '#') is one to skip. */
static bool directive_skipped(lexer *l)
{
    while (l->s[l->pos] == ' ' || l->s[l->pos] == '\t' || skip_comment(l))
        if (l->s[l->pos] == ' ' || l->s[l->pos] == '\t')
            l->pos++;
    size_t p = l->pos;
    while (ident_char(l->s[p]))
        p++;
    if (l->skip_all)
        return true;
    static const char *const skipped[] = {"pragma", "include", "line"};
    for (size_t i = 0; i < sizeof skipped / sizeof skipped[0]; i++)
        if (p - l->pos == strlen(skipped[i]) && memcmp(l->s + l->pos, skipped[i], p - l->pos) == 0)
            return true;
    return false;
}

static tok next(lexer *l)
{
    const char *s = l->s;
    for (;;) {
        char c = s[l->pos];
        if (c == '\n') {
            l->bol = true;
            l->pos++;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || skip_comment(l)) {
            if (c != '/')
                l->pos++;
            continue;
        }
        if (c == '\0')
            return (tok){TOK_END, l->pos, 0};
        if (c == '#' && l->bol) {
            l->pos++;
            if (directive_skipped(l))
                skip_directive(l);
            l->bol = false;
            continue;
        }
        l->bol = false;
        if (c == '"' || c == '\'') {
            skip_quoted(l);
            continue;
        }
        size_t p = l->pos;
        tok t = {TOK_PUNCT, p, 1};
        if (ident_start(c)) {
            while (ident_char(s[p]))
                p++;
            t.kind = TOK_IDENT;
        } else if (digit(c) || (c == '.' && digit(s[p + 1]))) {
            /* A preprocessing number: digits, letters, '.', and a sign
             * after an exponent's e, E, p or P. */
            for (p++; ident_char(s[p]) || s[p] == '.' ||
                      ((s[p] == '+' || s[p] == '-') && strchr("eEpP", s[p - 1]));
                 p++)
                ;
            t.kind = TOK_NUMBER;
        } else
            p++;
        t.len = p - t.start;
        l->pos = p;
        return t;
    }
}

static bool tok_is(const lexer *l, tok t, const char *word)
{
    return t.len == strlen(word) && memcmp(l->s + t.start, word, t.len) == 0;
}

/* The length of a floating literal's suffix-less part when the number n
 * (len bytes) is floating with no f, F, h or H suffix (a double, or a long
 * double with l or L); 0 when it is an integer or a float. */
static size_t double_literal(const char *n, size_t len)
{
    size_t i = 0;
    bool hex = len > 1 && n[0] == '0' && (n[1] == 'x' || n[1] == 'X');
    bool floating = false;
    const char *exp = hex ? "pP" : "eE";
    if (hex)
        i = 2;
    while (i < len && (digit(n[i]) || n[i] == '.' || (hex && strchr("abcdefABCDEF", n[i])))) {
        floating |= n[i] == '.';
        i++;
    }
    if (i < len && strchr(exp, n[i])) {
        floating = true;
        i++;
        if (i < len && (n[i] == '+' || n[i] == '-'))
            i++;
        while (i < len && digit(n[i]))
            i++;
    }
    if (!floating)
        return 0;
    size_t suffix = len - i;
    if (suffix == 0 || (suffix == 1 && (n[i] == 'l' || n[i] == 'L')))
        return i;
    return 0;
}

int bcl_source_check_literals(const char *text, size_t len, const char *path, bcl_error *e)
{
    lexer l;
    int rc = lexer_open(&l, text, len, false, path, e);
    if (rc)
        return rc;
    for (tok t = next(&l); t.kind != TOK_END && rc == BCL_OK; t = next(&l)) {
        size_t body = t.kind == TOK_NUMBER ? double_literal(l.s + t.start, t.len) : 0;
        if (!body)
            continue;
        unsigned line, col;
        position(&l, t.start, &line, &col);
        int shown = t.len > 64 ? 64 : (int)t.len;
        rc = bcl_fail(e, BCL_EXIT_INPUT,
                      "%s:%u:%u: '%.*s' is a double literal: write %.*sf (a model computes in "
                      "float32 on every side)",
                      path, line, col, shown, l.s + t.start, body > 64 ? 64 : (int)body,
                      l.s + t.start);
    }
    lexer_close(&l);
    return rc;
}

/* One parameter of update as written: its tokens after the qualifiers
 * (const, private), the first two kept (type and name). */
typedef struct param {
    size_t count;
    tok type, name;
    size_t start, end; /* its text in the spliced source, for messages */
} param;

#define PARAMS_KEPT (BCL_MAX_PARAMS + 2)

/* Reads update's parameter list after its '(' up to the matching ')':
 * *count parameters, the first PARAMS_KEPT of them in p. The token after
 * the ')' is returned. */
static tok read_params(lexer *l, param *p, size_t *count)
{
    size_t depth = 1, n = 0;
    param cur = {0};
    bool empty = true;
    tok t;
    for (t = next(l); t.kind != TOK_END; t = next(l)) {
        bool punct = t.kind == TOK_PUNCT;
        char c = l->s[t.start];
        if (punct && (c == '(' || c == '['))
            depth++;
        if (punct && (c == ')' || c == ']'))
            depth--;
        if (depth == 0 || (depth == 1 && punct && c == ',')) {
            if (!empty && n < PARAMS_KEPT)
                p[n] = cur;
            n += !empty || c == ',';
            memset(&cur, 0, sizeof cur);
            empty = true;
            if (depth == 0)
                break;
            continue;
        }
        if (empty)
            cur.start = t.start;
        empty = false;
        cur.end = t.start + t.len;
        if (cur.count == 0 && t.kind == TOK_IDENT &&
            (tok_is(l, t, "const") || tok_is(l, t, "private") || tok_is(l, t, "__private")))
            continue;
        if (cur.count == 0)
            cur.type = t;
        else if (cur.count == 1)
            cur.name = t;
        cur.count++;
    }
    *count = n;
    /* "(void)": no parameter. */
    if (n == 1 && p[0].count == 1 && tok_is(l, p[0].type, "void"))
        *count = 0;
    return next(l);
}

static bool param_shape_ok(const lexer *l, const param *p)
{
    return p->count == 2 && p->type.kind == TOK_IDENT && p->name.kind == TOK_IDENT &&
           !tok_is(l, p->name, "const");
}

/* Checks one definition of update (ret: its return type's token). */
static int check_signature(const lexer *l, tok ret, const param *p, size_t count, const char *path,
                           unsigned line, unsigned nparams, const char *const *names, bcl_error *e)
{
    if (!tok_is(l, ret, "float4"))
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "%s:%u: the state is 4 floats a ball (float4): update returns %.*s", path,
                        line, (int)ret.len, l->s + ret.start);
    if (count == 0)
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "%s:%u: update takes no ball: its first parameter is the state, float4 "
                        "NAME (4 floats a ball)",
                        path, line);
    size_t kept = count < PARAMS_KEPT ? count : PARAMS_KEPT;
    for (size_t i = 0; i < kept; i++)
        if (!param_shape_ok(l, &p[i]))
            return bcl_fail(e, BCL_EXIT_INPUT,
                            "%s:%u: update's parameter %zu is '%.*s': expected '%s NAME'", path,
                            line, i + 1, (int)(p[i].end - p[i].start), l->s + p[i].start,
                            i == 0 ? "float4" : "float");
    if (!tok_is(l, p[0].type, "float4"))
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "%s:%u: the state is 4 floats a ball (float4): update takes %.*s", path,
                        line, (int)p[0].type.len, l->s + p[0].type.start);
    if (count - 1 != nparams) {
        char list[512] = "";
        size_t used = 0;
        for (unsigned i = 0; i < nparams && used < sizeof list; i++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : ": ",
                                     names[i]);
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "%s:%u: update takes %zu parameter%s after the ball, the pragmas declare "
                        "%u%s",
                        path, line, count - 1, count == 2 ? "" : "s", nparams, list);
    }
    for (size_t i = 1; i < count; i++)
        if (!tok_is(l, p[i].type, "float"))
            return bcl_fail(e, BCL_EXIT_INPUT,
                            "%s:%u: update's parameter '%.*s' is %.*s: every parameter after the "
                            "ball is a float (the pragma's '%s')",
                            path, line, (int)p[i].name.len, l->s + p[i].name.start,
                            (int)p[i].type.len, l->s + p[i].type.start, names[i - 1]);
    return BCL_OK;
}

int bcl_source_check_update(const char *text, size_t len, const char *path, unsigned nparams,
                            const char *const *param_names, unsigned *line, bcl_error *e)
{
    lexer l;
    int rc = lexer_open(&l, text, len, true, path, e);
    if (rc)
        return rc;
    unsigned found = 0, col;
    size_t depth = 0;
    tok prev = {TOK_END, 0, 0};
    for (tok t = next(&l); t.kind != TOK_END && rc == BCL_OK;) {
        char c = l.s[t.start];
        if (t.kind == TOK_PUNCT && c == '{')
            depth++;
        if (t.kind == TOK_PUNCT && c == '}' && depth > 0)
            depth--;
        if (depth > 0 || t.kind != TOK_IDENT || !tok_is(&l, t, "update") ||
            prev.kind != TOK_IDENT) {
            prev = t;
            t = next(&l);
            continue;
        }
        tok ret = prev;
        tok open = next(&l);
        if (open.kind != TOK_PUNCT || l.s[open.start] != '(') {
            prev = t;
            t = open;
            continue;
        }
        param p[PARAMS_KEPT];
        size_t count;
        tok after = read_params(&l, p, &count);
        if (after.kind == TOK_PUNCT && l.s[after.start] == '{') {
            unsigned at;
            position(&l, t.start, &at, &col);
            if (found)
                rc = bcl_fail(e, BCL_EXIT_INPUT,
                              "%s:%u: update is defined twice (first at line %u)", path, at, found);
            else
                rc = check_signature(&l, ret, p, count, path, at, nparams, param_names, e);
            found = found ? found : at;
        }
        prev = (tok){TOK_PUNCT, 0, 0};
        t = after;
    }
    lexer_close(&l);
    if (rc == BCL_OK && !found)
        rc = bcl_fail(e, BCL_EXIT_INPUT, "%s: no 'float4 update(float4 b, ...)' function", path);
    if (rc == BCL_OK && line)
        *line = found;
    return rc;
}
