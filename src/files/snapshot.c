/*
 * Pictures of a state, as a PNG: the world rectangle (the model's box, or
 * the balls' bounding box) fitted with its aspect and a margin. Each ball
 * counts on its pixel (3 x 3 when balls are few); colour goes light to dark
 * blue with log(1 + count), so one ball shows and so does a pile's shape.
 * libpng's simplified API (no setjmp) makes it in memory, for an output set.
 */
#include "files/files.h"
#include "util/util.h"

#include <math.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>

#define MARGIN            4   /* pixels around the outline */
#define DEFAULT_LONG_SIDE 800 /* when no size is asked for */

typedef struct frame {
    double x0, y0, x1, y1; /* world rectangle */
} frame;

typedef struct rgb {
    unsigned char r, g, b;
} rgb;

static const rgb BACKGROUND = {255, 255, 255};
static const rgb BOX_LINE = {60, 60, 60};      /* the model's walls */
static const rgb FRAME_LINE = {180, 180, 180}; /* only the balls' extent */
static const rgb FEW = {158, 202, 225};        /* one ball in a crowded picture */
static const rgb MANY = {8, 48, 107};          /* the most crowded pixel */

/* A rectangle of zero width (balls on one line) still needs some extent. */
static void widen(double *lo, double *hi)
{
    if (*hi > *lo)
        return;
    double d = fmax(0.5, fabs(*lo) * 1e-3);
    *lo -= d;
    *hi += d;
}

static int world_frame(const float *s, size_t n, const bcl_snapshot_opts *o, frame *f, bcl_error *e)
{
    if (o->has_box) {
        *f = (frame){o->box[0], o->box[1], o->box[2], o->box[3]};
        if (!(isfinite(f->x0) && isfinite(f->y0) && isfinite(f->x1) && isfinite(f->y1) &&
              f->x1 > f->x0 && f->y1 > f->y0))
            return bcl_fail(e, BCL_EXIT_INPUT, "snapshot: the box is empty or not finite");
        return BCL_OK;
    }
    *f = (frame){INFINITY, INFINITY, -INFINITY, -INFINITY};
    for (size_t i = 0; i < n; i++) {
        double x = s[4 * i], y = s[4 * i + 1];
        if (!isfinite(x) || !isfinite(y))
            continue;
        f->x0 = fmin(f->x0, x);
        f->x1 = fmax(f->x1, x);
        f->y0 = fmin(f->y0, y);
        f->y1 = fmax(f->y1, y);
    }
    if (f->x0 > f->x1) /* no finite ball: an empty unit square */
        *f = (frame){0, 0, 1, 1};
    widen(&f->x0, &f->x1);
    widen(&f->y0, &f->y1);
    return BCL_OK;
}

static unsigned clamp_side(double v)
{
    if (!(v >= BCL_SNAPSHOT_MIN_SIDE))
        return BCL_SNAPSHOT_MIN_SIDE;
    if (v > BCL_SNAPSHOT_MAX_SIDE)
        return BCL_SNAPSHOT_MAX_SIDE;
    return (unsigned)lround(v);
}

static rgb ramp(uint32_t count, uint32_t most)
{
    double t = log1p((double)count) / log1p((double)most);
    return (rgb){(unsigned char)lround(FEW.r + t * (MANY.r - FEW.r)),
                 (unsigned char)lround(FEW.g + t * (MANY.g - FEW.g)),
                 (unsigned char)lround(FEW.b + t * (MANY.b - FEW.b))};
}

static void put(unsigned char *img, unsigned width, long c, long r, rgb colour)
{
    unsigned char *p = img + 3 * ((size_t)r * width + (size_t)c);
    p[0] = colour.r;
    p[1] = colour.g;
    p[2] = colour.b;
}

/* Counts balls per pixel of the bw x bh area at (c0, r0) and paints them. */
static void draw_balls(unsigned char *img, uint32_t *count, unsigned width, long c0, long r0,
                       long bw, long bh, const frame *f, const float *s, size_t n)
{
    double fw = f->x1 - f->x0, fh = f->y1 - f->y0;
    /* 3 x 3 dots while they cover at most a quarter of the area. */
    long rad = (double)n * 9.0 <= (double)bw * (double)bh / 4.0 ? 1 : 0;
    uint32_t most = 0;
    for (size_t i = 0; i < n; i++) {
        double u = ((double)s[4 * i] - f->x0) / fw, v = ((double)s[4 * i + 1] - f->y0) / fh;
        if (!(u >= 0.0 && u <= 1.0 && v >= 0.0 && v <= 1.0))
            continue; /* non-finite, or outside a model's box */
        long c = (long)(u * (double)bw), r = (long)(v * (double)bh);
        c = c < bw ? c : bw - 1;
        r = r < bh ? r : bh - 1;
        for (long dr = -rad; dr <= rad; dr++) {
            for (long dc = -rad; dc <= rad; dc++) {
                long cc = c + dc, rr = r + dr;
                if (cc < 0 || cc >= bw || rr < 0 || rr >= bh)
                    continue;
                uint32_t *k = &count[(size_t)rr * (size_t)bw + (size_t)cc];
                if (*k < UINT32_MAX)
                    (*k)++;
                if (*k > most)
                    most = *k;
            }
        }
    }
    for (long r = 0; r < bh; r++)
        for (long c = 0; c < bw; c++)
            if (count[(size_t)r * (size_t)bw + (size_t)c])
                put(img, width, c0 + c, r0 + r,
                    ramp(count[(size_t)r * (size_t)bw + (size_t)c], most));
}

static void draw_outline(unsigned char *img, unsigned width, long c0, long r0, long c1, long r1,
                         rgb colour)
{
    for (long c = c0; c <= c1; c++) {
        put(img, width, c, r0, colour);
        put(img, width, c, r1, colour);
    }
    for (long r = r0; r <= r1; r++) {
        put(img, width, c0, r, colour);
        put(img, width, c1, r, colour);
    }
}

int bcl_snapshot_encode(const float *state, size_t n, const bcl_snapshot_opts *o, void **png,
                        size_t *len, bcl_error *e)
{
    *png = NULL;
    *len = 0;
    frame f;
    int rc = world_frame(state, n, o, &f, e);
    if (rc)
        return rc;
    double fw = f.x1 - f.x0, fh = f.y1 - f.y0;
    unsigned width = o->width, height = o->height;
    if (width == 0 || height == 0) {
        width = fw >= fh ? DEFAULT_LONG_SIDE : clamp_side(DEFAULT_LONG_SIDE * fw / fh);
        height = fw >= fh ? clamp_side(DEFAULT_LONG_SIDE * fh / fw) : DEFAULT_LONG_SIDE;
    }
    if (width < BCL_SNAPSHOT_MIN_SIDE || height < BCL_SNAPSHOT_MIN_SIDE ||
        width > BCL_SNAPSHOT_MAX_SIDE || height > BCL_SNAPSHOT_MAX_SIDE)
        return bcl_fail(e, BCL_EXIT_INPUT, "snapshot: %ux%u pixels: expected each side %d to %d",
                        width, height, BCL_SNAPSHOT_MIN_SIDE, BCL_SNAPSHOT_MAX_SIDE);

    /* The ball area keeps the world's aspect inside the margins. */
    long aw = (long)width - 2 * MARGIN, ah = (long)height - 2 * MARGIN, bw, bh;
    if (fw / fh >= (double)aw / (double)ah) {
        bw = aw;
        bh = lround((double)aw * fh / fw);
    } else {
        bh = ah;
        bw = lround((double)ah * fw / fh);
    }
    bw = bw < 1 ? 1 : bw;
    bh = bh < 1 ? 1 : bh;
    long c0 = ((long)width - bw) / 2, r0 = ((long)height - bh) / 2;

    size_t pixels = (size_t)width * height;
    unsigned char *img = malloc(3 * pixels);
    uint32_t *count = calloc((size_t)bw * (size_t)bh, sizeof *count);
    if (!img || !count) {
        free(img);
        free(count);
        return bcl_fail(e, BCL_EXIT_RUNTIME, "snapshot: out of memory for %ux%u pixels", width,
                        height);
    }
    for (size_t i = 0; i < pixels; i++)
        memcpy(img + 3 * i, &BACKGROUND, 3);
    /* The outline lies just outside the ball area, so no ball hides it. */
    draw_outline(img, width, c0 - 1, r0 - 1, c0 + bw, r0 + bh, o->has_box ? BOX_LINE : FRAME_LINE);
    draw_balls(img, count, width, c0, r0, bw, bh, &f, state, n);
    free(count);

    png_image pi;
    memset(&pi, 0, sizeof pi);
    pi.version = PNG_IMAGE_VERSION;
    pi.width = width;
    pi.height = height;
    pi.format = PNG_FORMAT_RGB;
    png_alloc_size_t size = 0;
    void *buf = NULL;
    /* First call sizes the buffer, the second fills it. */
    if (png_image_write_to_memory(&pi, NULL, &size, 0, img, 0, NULL)) {
        buf = malloc(size);
        if (buf && !png_image_write_to_memory(&pi, buf, &size, 0, img, 0, NULL)) {
            free(buf);
            buf = NULL;
        }
    }
    free(img);
    if (!buf) {
        rc = bcl_fail(e, BCL_EXIT_RUNTIME, "snapshot: cannot encode the PNG: %s",
                      pi.message[0] ? pi.message : "out of memory");
        png_image_free(&pi);
        return rc;
    }
    *png = buf;
    *len = size;
    return BCL_OK;
}

int bcl_snapshot_write(const char *path, const float *state, size_t n, const bcl_snapshot_opts *o,
                       bcl_error *e)
{
    bcl_outputs s = {0};
    int rc = bcl_outputs_add(&s, path, NULL, e);
    if (rc == BCL_OK)
        rc = bcl_snapshot_write_to(&s, 0, state, n, o, e);
    return bcl_outputs_end(&s, rc, e);
}

int bcl_snapshot_write_to(bcl_outputs *s, size_t i, const float *state, size_t n,
                          const bcl_snapshot_opts *o, bcl_error *e)
{
    void *png;
    size_t len;
    int rc = bcl_snapshot_encode(state, n, o, &png, &len, e);
    if (rc)
        return rc;
    rc = bcl_outputs_write(s, i, png, len, e);
    free(png);
    return rc;
}
