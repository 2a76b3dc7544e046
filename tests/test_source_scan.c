/*
 * Unit tests of the model source scanner (src/models/source_scan.c): which
 * literals are refused and where, what is skipped (comments, strings,
 * characters, #pragma lines, backslash-newlines), and update's signature.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "models/models.h"
#include "util/util.h"

#include <stdio.h>
#include <string.h>

/* bcl_source_check_literals on text as "m.cl": its code, the message in e. */
static int literals(const char *text, bcl_error *e)
{
    memset(e, 0, sizeof *e);
    return bcl_source_check_literals(text, strlen(text), "m.cl", e);
}

static void expect_refused(const char *text, const char *where, const char *literal)
{
    bcl_error e;
    assert_int_equal(literals(text, &e), BCL_EXIT_INPUT);
    char want[128];
    snprintf(want, sizeof want, "m.cl:%s: '%s' is a double literal", where, literal);
    if (strstr(e.msg, want) != e.msg)
        fail_msg("for %s: got \"%s\", expected it to start with \"%s\"", text, e.msg, want);
    bcl_error_clear(&e);
}

static void expect_accepted(const char *text)
{
    bcl_error e;
    if (literals(text, &e) != BCL_OK)
        fail_msg("for %s: refused: %s", text, e.msg);
}

static void test_double_literals_refused(void **state)
{
    (void)state;
    expect_refused("x = 0.5;", "1:5", "0.5");
    expect_refused("x = .5;", "1:5", ".5");
    expect_refused("x = 1.;", "1:5", "1.");
    expect_refused("x = 1e3;", "1:5", "1e3");
    expect_refused("x = 1E-3;", "1:5", "1E-3");
    expect_refused("x = 0x1p3;", "1:5", "0x1p3");
    expect_refused("x = 0x1.8p+1;", "1:5", "0x1.8p+1");
    expect_refused("x = 2.5L;", "1:5", "2.5L");
    expect_refused("a\n  b = 1.0f * 2.0;\n", "2:14", "2.0");
    /* The fix the message offers. */
    bcl_error e;
    literals("y = 0.25;", &e);
    assert_non_null(strstr(e.msg, "write 0.25f (a model computes in float32 on every side)"));
    literals("y = 3.0l;", &e);
    assert_non_null(strstr(e.msg, "write 3.0f"));
}

static void test_float_and_integer_literals_accepted(void **state)
{
    (void)state;
    expect_accepted("x = 1.0f + 2.f + .5f + 1e3f + 1E-3F + 0x1p3f + 0x1.8p-1F;");
    expect_accepted("i = 1 + 0x10 + 10u + 077 + 0x1f + 0xE + 7ul;");
    expect_accepted("h = 1.0h;");
    /* Names with digits and exponents in them are no numbers. */
    expect_accepted("x1e3 = b.x + e5 + _1.5f;");
}

static void test_comments_strings_and_pragmas_skipped(void **state)
{
    (void)state;
    expect_accepted("/* 0.5 */ x = 1; // 2.0\n");
    expect_accepted("/* a\n * 1.5\n */ y = 2;");
    expect_accepted("s = \"0.5 and \\\" 1.0\"; c = '.'; d = '\\'';");
    expect_accepted("#pragma ballcl param dt 0.016666668\nfloat4 f;\n");
    expect_accepted("  #  pragma ballcl param g 980.0\n");
    expect_accepted("#include \"a1.0.h\"\n#line 3 \"x.cl\"\n");
    /* A // comment continued by a backslash-newline goes on. */
    expect_accepted("// note \\\n 0.5\nx = 1;");
    /* A #pragma continued on the next line is still the pragma. */
    expect_accepted("#pragma ballcl param drag \\\n 0.5\nx = 1;");
    /* Other directives are code: a #define's double reaches the update. */
    expect_refused("#define DT 0.5\n", "1:12", "0.5");
    /* After a comment and a string, positions still count from the file. */
    expect_refused("/* x */ s = \"a\"; t = 1.5;", "1:22", "1.5");
    /* A backslash-newline inside code: the position is in the file. */
    expect_refused("x = 1 + \\\n  2.5;", "2:3", "2.5");
}

/* bcl_source_check_update on text with the drag-gravity pragmas. */
static int update(const char *text, unsigned nparams, unsigned *line, bcl_error *e)
{
    static const char *const names[] = {"dt", "gravity", "drag"};
    memset(e, 0, sizeof *e);
    return bcl_source_check_update(text, strlen(text), "m.cl", nparams, names, line, e);
}

static void expect_update_refused(const char *text, unsigned nparams, const char *msg)
{
    bcl_error e;
    unsigned line = 0;
    assert_int_equal(update(text, nparams, &line, &e), BCL_EXIT_INPUT);
    if (strcmp(e.msg, msg) != 0)
        fail_msg("got \"%s\", expected \"%s\"", e.msg, msg);
}

static void test_signature_accepted(void **state)
{
    (void)state;
    bcl_error e;
    unsigned line = 0;
    const char *drag = "/* Balls under gravity with linear drag. */\n"
                       "#pragma ballcl param dt 0.016666668\n"
                       "#pragma ballcl param gravity 980\n"
                       "#pragma ballcl param drag 0.5\n"
                       "float4 update(float4 b, float dt, float gravity, float drag)\n"
                       "{\n"
                       "    b.w = b.w + (gravity - drag * b.w) * dt;\n"
                       "    return b;\n"
                       "}\n";
    assert_int_equal(update(drag, 3, &line, &e), BCL_OK);
    assert_int_equal(line, 5);
    /* A prototype first, helpers, const parameters, the name split. */
    const char *split = "float4 update(float4 b, float t);\n"
                        "static float half(float v) { return v * 0.5f; }\n"
                        "float4\nupdate (const float4 s,\n const float t)\n{ s.x = half(t); "
                        "return s; }\n";
    assert_int_equal(update(split, 1, &line, &e), BCL_OK);
    assert_int_equal(line, 4);
    assert_int_equal(update("float4 update(float4 b) { return update2(b); }", 0, &line, &e),
                     BCL_OK);
    assert_int_equal(line, 1);
    /* A call of update inside a function is no definition. */
    assert_int_equal(update("float4 update(float4 b) { return b; }\n"
                            "void k(float4 *s) { s[0] = update(s[0]); }\n",
                            0, &line, &e),
                     BCL_OK);
}

static void test_signature_refused(void **state)
{
    (void)state;
    expect_update_refused("float8 update(float8 b, float dt) { return b; }", 1,
                          "m.cl:1: the state is 4 floats a ball (float4): update returns float8");
    expect_update_refused("float4 update(float8 b, float dt) { return b; }", 1,
                          "m.cl:1: the state is 4 floats a ball (float4): update takes float8");
    expect_update_refused("\nfloat2 update(float2 b) { return b; }", 0,
                          "m.cl:2: the state is 4 floats a ball (float4): update returns float2");
    expect_update_refused("float4 update(float4 b, float dt, float gravity) { return b; }", 3,
                          "m.cl:1: update takes 2 parameters after the ball, the pragmas "
                          "declare 3: dt, gravity, drag");
    expect_update_refused("float4 update(float4 b, float dt) { return b; }", 0,
                          "m.cl:1: update takes 1 parameter after the ball, the pragmas "
                          "declare 0");
    expect_update_refused("float4 update(float4 b, int dt, float gravity) { return b; }", 2,
                          "m.cl:1: update's parameter 'dt' is int: every parameter after the "
                          "ball is a float (the pragma's 'dt')");
    expect_update_refused("float4 update(float4 b, double g) { return b; }", 1,
                          "m.cl:1: update's parameter 'g' is double: every parameter after the "
                          "ball is a float (the pragma's 'dt')");
    expect_update_refused("float4 update(float4 *b) { return *b; }", 0,
                          "m.cl:1: update's parameter 1 is 'float4 *b': expected 'float4 NAME'");
    expect_update_refused("float4 update(void) { float4 b; return b; }", 0,
                          "m.cl:1: update takes no ball: its first parameter is the state, "
                          "float4 NAME (4 floats a ball)");
    expect_update_refused("float4 step(float4 b) { return b; }\n"
                          "float4 update(float4 b);\n"
                          "/* float4 update(float4 b) { } */\n"
                          "#define X float4 update(float4 b) {\n",
                          0, "m.cl: no 'float4 update(float4 b, ...)' function");
    expect_update_refused("float4 update(float4 b) { return b; }\n"
                          "float4 update(float4 b) { return b; }\n",
                          0, "m.cl:2: update is defined twice (first at line 1)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_double_literals_refused),
        cmocka_unit_test(test_float_and_integer_literals_accepted),
        cmocka_unit_test(test_comments_strings_and_pragmas_skipped),
        cmocka_unit_test(test_signature_accepted),
        cmocka_unit_test(test_signature_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
