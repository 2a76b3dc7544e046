/*
 * Unit tests of the snapshot pictures: every PNG made is decoded again with
 * libpng's reader and checked for its size, its outline, a dot where each
 * ball is and background where none is, darker shading where balls pile up,
 * the size option's parsing and the atomic write.
 */
#define _GNU_SOURCE /* mkdtemp */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "run/run.h"
#include "measure/timing.h"
#include "models/rng.h"
#include "files/files.h"

#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct picture {
    unsigned width, height;
    unsigned char *rgb;
} picture;

static picture decode(const void *png, size_t len)
{
    png_image pi;
    memset(&pi, 0, sizeof pi);
    pi.version = PNG_IMAGE_VERSION;
    assert_true(png_image_begin_read_from_memory(&pi, png, len));
    pi.format = PNG_FORMAT_RGB;
    picture p = {pi.width, pi.height, malloc(PNG_IMAGE_SIZE(pi))};
    assert_non_null(p.rgb);
    assert_true(png_image_finish_read(&pi, NULL, p.rgb, 0, NULL));
    return p;
}

static picture encode(const float *s, size_t n, const bcl_snapshot_opts *o)
{
    void *png;
    size_t len;
    bcl_error e = {0};
    assert_int_equal(bcl_snapshot_encode(s, n, o, &png, &len, &e), BCL_OK);
    picture p = decode(png, len);
    free(png);
    return p;
}

static const unsigned char *px(const picture *p, unsigned c, unsigned r)
{
    assert_true(c < p->width && r < p->height);
    return p->rgb + 3 * ((size_t)r * p->width + c);
}

static bool is_white(const picture *p, unsigned c, unsigned r)
{
    const unsigned char *q = px(p, c, r);
    return q[0] == 255 && q[1] == 255 && q[2] == 255;
}

/* A ball is drawn blue: more blue than red. */
static bool is_ball(const picture *p, unsigned c, unsigned r)
{
    const unsigned char *q = px(p, c, r);
    return q[2] > q[0] + 40;
}

static unsigned darkness(const picture *p, unsigned c, unsigned r)
{
    const unsigned char *q = px(p, c, r);
    return 765u - q[0] - q[1] - q[2];
}

/* Box 100 x 50 in 200 x 100 pixels: the 4-pixel margins leave 192 x 92, so
 * the ball area is 184 x 92 (aspect 2) at column 8, row 4; its outline runs
 * one pixel outside, columns 7 and 192, rows 3 and 96. */
static void test_box_layout(void **state)
{
    (void)state;
    const float s[] = {50, 25, 0, 0, 0, 0, 0, 0, 100, 50, 0, 0};
    bcl_snapshot_opts o = {.width = 200, .height = 100, .has_box = true, .box = {0, 0, 100, 50}};
    picture p = encode(s, 3, &o);
    assert_int_equal(p.width, 200);
    assert_int_equal(p.height, 100);
    /* Outline: grey, at the four corners and the middle of each side. */
    const unsigned outline[][2] = {{7, 3}, {192, 3}, {7, 96}, {192, 96}, {100, 3}, {7, 50}};
    for (size_t i = 0; i < 6; i++) {
        const unsigned char *q = px(&p, outline[i][0], outline[i][1]);
        assert_true(q[0] == q[1] && q[1] == q[2] && q[0] < 128);
    }
    /* Balls: the centre (column 8 + 92, row 4 + 46) and the two corners. */
    assert_true(is_ball(&p, 100, 50));
    assert_true(is_ball(&p, 8, 4));
    assert_true(is_ball(&p, 191, 95));
    /* Background elsewhere, inside the box and in the margin. */
    assert_true(is_white(&p, 50, 70));
    assert_true(is_white(&p, 150, 20));
    assert_true(is_white(&p, 2, 2));
    free(p.rgb);
}

/* Many balls on one spot are darker than one ball alone. */
static void test_density(void **state)
{
    (void)state;
    enum { N = 1001 };
    static float s[4 * N];
    for (size_t i = 0; i < N; i++) {
        s[4 * i] = 20.0f;
        s[4 * i + 1] = 20.0f;
    }
    s[0] = 80.0f; /* ball 0 alone */
    bcl_snapshot_opts o = {.width = 200, .height = 100, .has_box = true, .box = {0, 0, 100, 50}};
    picture p = encode(s, N, &o);
    /* x = 80: column 8 + 147; x = 20: column 8 + 36; y = 20: row 4 + 36. */
    assert_true(is_ball(&p, 155, 40));
    assert_true(is_ball(&p, 44, 40));
    assert_true(darkness(&p, 44, 40) > darkness(&p, 155, 40) + 100);
    free(p.rgb);
}

/* Without a size, the longer side is 800 and the other follows the box. */
static void test_default_size(void **state)
{
    (void)state;
    const float s[] = {1, 1, 0, 0};
    bcl_snapshot_opts o = {.has_box = true, .box = {0, 0, 800, 600}};
    picture p = encode(s, 1, &o);
    assert_int_equal(p.width, 800);
    assert_int_equal(p.height, 600);
    free(p.rgb);
    o.box[2] = 300;
    o.box[3] = 900;
    p = encode(s, 1, &o);
    assert_int_equal(p.width, 267);
    assert_int_equal(p.height, 800);
    free(p.rgb);
}

/* No box (the seed model): the balls' bounding box is framed, so the
 * extreme balls land in the corners; non-finite balls are left out. */
static void test_bounding_box(void **state)
{
    (void)state;
    const float s[] = {-1e6f, 5, 0, 0, 3e6f, 200005, 0, 0, NAN, 0, 0, 0, INFINITY, -INFINITY, 0, 0};
    bcl_snapshot_opts o = {.width = 400, .height = 100};
    picture p = encode(s, 4, &o);
    assert_int_equal(p.width, 400);
    assert_int_equal(p.height, 100);
    /* 4e6 x 2e5 into 392 x 92: the width limits, 392 x 20 (aspect 20),
     * at column 4, row (100 - 20) / 2 = 40. */
    assert_true(is_ball(&p, 4, 40));
    assert_true(is_ball(&p, 395, 59));
    assert_true(is_white(&p, 200, 50));
    assert_true(is_white(&p, 200, 20));
    free(p.rgb);
    /* Only non-finite balls, or one ball: still a picture. */
    p = encode(s + 8, 2, &o);
    assert_true(is_white(&p, 200, 50));
    free(p.rgb);
    /* One ball: the frame is widened around it (2000 x 1, one row high). */
    p = encode(s, 1, &o);
    assert_true(is_ball(&p, 200, 49));
    free(p.rgb);
}

static void expect_error(const float *s, size_t n, const bcl_snapshot_opts *o, int code,
                         const char *words)
{
    void *png = (void *)1;
    size_t len = 1;
    bcl_error e = {0};
    assert_int_equal(bcl_snapshot_encode(s, n, o, &png, &len, &e), code);
    assert_null(png);
    if (!strstr(e.msg, words))
        fail_msg("message '%s' lacks '%s'", e.msg, words);
}

static void test_encode_errors(void **state)
{
    (void)state;
    const float s[] = {1, 1, 0, 0};
    bcl_snapshot_opts o = {.width = 8, .height = 100, .has_box = true, .box = {0, 0, 10, 10}};
    expect_error(s, 1, &o, BCL_EXIT_INPUT, "8x100");
    o.width = 5000;
    expect_error(s, 1, &o, BCL_EXIT_INPUT, "5000x100");
    o.width = 100;
    o.box[2] = 0;
    expect_error(s, 1, &o, BCL_EXIT_INPUT, "box");
    o.box[2] = NAN;
    expect_error(s, 1, &o, BCL_EXIT_INPUT, "box");
}

static void test_size_parse(void **state)
{
    (void)state;
    unsigned w = 0, h = 0;
    bcl_error e = {0};
    assert_int_equal(bcl_snapshot_size_parse("640x480", "--snapshot-size", &w, &h, &e), BCL_OK);
    assert_int_equal(w, 640);
    assert_int_equal(h, 480);
    const char *bad[] = {"640",      "640x",      "x480", "640x480x2", "10x480", "640x5000",
                         "-640x480", "640 x 480", "",     "axb",       "640X480"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bcl_error_clear(&e);
        assert_int_equal(bcl_snapshot_size_parse(bad[i], "--snapshot-size", &w, &h, &e),
                         BCL_EXIT_INPUT);
        if (!strstr(e.msg, "--snapshot-size"))
            fail_msg("'%s': message '%s' does not name the option", bad[i], e.msg);
    }
}

/* The file is written whole (and decodes); an unwritable place is an input
 * error that leaves nothing behind. */
static void test_write(void **state)
{
    (void)state;
    char dir[] = "/tmp/ballcl-snapshot-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/s.png", dir);
    const float s[] = {5, 5, 0, 0};
    bcl_snapshot_opts o = {.width = 64, .height = 48, .has_box = true, .box = {0, 0, 10, 10}};
    bcl_error e = {0};
    assert_int_equal(bcl_snapshot_write(path, s, 1, &o, &e), BCL_OK);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static unsigned char buf[1 << 16];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_memory_equal(buf, "\x89PNG\r\n\x1a\n", 8);
    picture p = decode(buf, len);
    assert_int_equal(p.width, 64);
    assert_int_equal(p.height, 48);
    free(p.rgb);
    unlink(path);

    char missing[300];
    snprintf(missing, sizeof missing, "%s/no/such/s.png", dir);
    bcl_error_clear(&e);
    assert_int_equal(bcl_snapshot_write(missing, s, 1, &o, &e), BCL_EXIT_INPUT);
    assert_non_null(strstr(e.msg, "cannot write"));
    assert_int_equal(rmdir(dir), 0); /* empty: no temporary file left */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_box_layout),    cmocka_unit_test(test_density),
        cmocka_unit_test(test_default_size),  cmocka_unit_test(test_bounding_box),
        cmocka_unit_test(test_encode_errors), cmocka_unit_test(test_size_parse),
        cmocka_unit_test(test_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
