/* Text for tables: names cut to a column's width, visibly (README.md,
 * `ballcl devices`, `ballcl cache list`). */
#include "cli.h"

#include <string.h>

/* Display columns of UTF-8 text: continuation bytes take none. */
static size_t columns(const char *s, size_t bytes)
{
    size_t n = 0;
    for (size_t i = 0; i < bytes; i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

const char *cli_shown(const char *text)
{
    static _Thread_local char ring[8][1024];
    static _Thread_local unsigned next;
    char *out = ring[next++ % 8];
    bcl_escape(text ? text : "", out, sizeof ring[0]);
    return out;
}

void cli_ellipsize(const char *raw, size_t width, char *out, size_t size)
{
    /* Driver strings and labels reach a terminal: control characters are
     * shown as \xNN, never sent raw. */
    char text[1024];
    bcl_escape(raw, text, sizeof text);
    size_t len = strlen(text);
    if (columns(text, len) <= width || width < 2) {
        snprintf(out, size, "%s", text);
        return;
    }
    /* The longest prefix of width - 1 columns (room for the ellipsis),
     * never splitting a UTF-8 sequence. */
    size_t cut = 0, cols = 0;
    while (cut < len && cols < width - 1) {
        cut++;
        while (cut < len && ((unsigned char)text[cut] & 0xC0) == 0x80)
            cut++;
        cols++;
    }
    /* Back to a word boundary: before a space, or after a '-' ("pthread-"),
     * unless that would leave less than half the room: a name that is one
     * long word is cut inside it, the ellipsis still saying so. */
    size_t b = cut;
    while (b > 0 && text[b] != ' ' && text[b - 1] != '-' && text[b - 1] != ' ')
        b--;
    if (b >= (width - 1) / 2)
        cut = b;
    while (cut > 0 && (text[cut - 1] == ' ' || text[cut - 1] == ',' || text[cut - 1] == ':'))
        cut--;
    snprintf(out, size, "%.*s\xE2\x80\xA6", (int)cut, text);
}

void cli_field(const char *text, size_t width, char *out, size_t size)
{
    cli_ellipsize(text, width, out, size);
    size_t used = strlen(out), cols = columns(out, used);
    while (cols < width && used + 1 < size) {
        out[used++] = ' ';
        cols++;
    }
    out[used] = '\0';
}
