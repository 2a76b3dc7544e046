/* Unit tests of the table text helpers of the CLI (tools/cli/text.c): long
 * names are cut at a word with an ellipsis, never silently mid-word. */
#include "cli.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#define ELLIPSIS "\xE2\x80\xA6"

static void cut(const char *text, size_t width, const char *want)
{
    char out[256];
    cli_ellipsize(text, width, out, sizeof out);
    if (strcmp(out, want) != 0)
        fail_msg("'%s' cut to %zu: got '%s', wanted '%s'", text, width, out, want);
}

static void test_fits(void **state)
{
    (void)state;
    cut("Portable Computing Language", 27, "Portable Computing Language");
    cut("Portable Computing Language", 40, "Portable Computing Language");
    cut("", 10, "");
}

static void test_word_boundary(void **state)
{
    (void)state;
    /* The old table printed "Portable Computing Languag". */
    cut("Portable Computing Language", 26, "Portable Computing" ELLIPSIS);
    cut("OpenCL 3.0 PoCL HSTR: pthread-x86_64-pc-linux-gnu-haswell", 20,
        "OpenCL 3.0 PoCL" ELLIPSIS);
    /* After a hyphen is a boundary too. */
    cut("pthread-haswell-AMD-EPYC-7B13", 20, "pthread-haswell-" ELLIPSIS);
    /* No trailing separators before the ellipsis. */
    cut("NVIDIA CUDA, the big one", 14, "NVIDIA CUDA" ELLIPSIS);
}

static void test_one_long_word(void **state)
{
    (void)state;
    /* No boundary in reach: cut inside the word, the ellipsis says so. */
    cut("Supercalifragilisticexpialidocious", 10, "Supercali" ELLIPSIS);
}

static void test_utf8_and_field(void **state)
{
    (void)state;
    /* A multi-byte character is one column and is never split. */
    cut("Gr\xC3\xA4"
        "fikkarte Eins Zwei",
        12,
        "Gr\xC3\xA4"
        "fikkarte" ELLIPSIS);
    char out[64];
    cli_field("Portable Computing Language", 26, out, sizeof out);
    /* 18 characters, the ellipsis, 7 spaces: 26 columns, 28 bytes. */
    assert_string_equal(out, "Portable Computing" ELLIPSIS "       ");
    cli_field("abc", 5, out, sizeof out);
    assert_string_equal(out, "abc  ");
}

static void escaped(const char *in, size_t size, const char *want)
{
    char out[256];
    bcl_escape(in, out, size);
    if (strcmp(out, want) != 0)
        fail_msg("bcl_escape('%s', %zu): got '%s', wanted '%s'", in, size, out, want);
}

/* Everything a file or a driver says is shown by bcl_escape (and cli_shown)
 * before it reaches a terminal (docs/RELIABILITY.md, class 5). */
static void test_escape(void **state)
{
    (void)state;
    /* C0 and DEL: an OSC title sequence and a clear-screen. */
    escaped("a\x1b]0;t\x07\x1b[2J\x7f", 256, "a\\x1b]0;t\\x07\\x1b[2J\\x7f");
    /* C1 controls as UTF-8 (U+0085 NEL, U+009B CSI): each byte shown. */
    escaped("x\xC2\x85y\xC2\x9B", 256, "x\\xc2\\x85y\\xc2\\x9b");
    /* Printable UTF-8 kept: U+00A0 and up, 3- and 4-byte characters. */
    escaped("Ger\xC3\xA4t \xE2\x80\x94 \xF0\x9F\x98\x80", 256,
            "Ger\xC3\xA4t \xE2\x80\x94 \xF0\x9F\x98\x80");
    /* Bytes that are no UTF-8: a lone CSI byte, a lone lead byte, an
     * overlong form, a surrogate, a cut sequence at the end. */
    escaped("\x9b", 256, "\\x9b");
    escaped("\xC3(", 256, "\\xc3(");
    escaped("\xC0\xAF", 256, "\\xc0\\xaf");
    escaped("\xED\xA0\x80", 256, "\\xed\\xa0\\x80");
    escaped("ab\xE2\x80", 256, "ab\\xe2\\x80");
    /* A small buffer: never half a character or half an escape. */
    escaped("ab\xC3\xA4", 4, "ab");
    escaped("ab\x1b", 6, "ab");
    escaped("ab\x1b", 7, "ab\\x1b");
    /* cli_shown is the same text. */
    assert_string_equal(cli_shown("n\x1b[2J"), "n\\x1b[2J");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fits),          cmocka_unit_test(test_word_boundary),
        cmocka_unit_test(test_one_long_word), cmocka_unit_test(test_utf8_and_field),
        cmocka_unit_test(test_escape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
