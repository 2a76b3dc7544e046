/*
 * The cache folder (docs/cache.md): where it is, creating it 0700, listing
 * and clearing its program entries. The tuned files share the folder, so
 * list and clear touch only files named like program entries.
 */
#include "files/files.h"
#include "cache/cache.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A temporary younger than this may belong to a writer that is still running. */
#define STALE_TEMP_SECONDS 600

int bcl_cache_dir(char *out, size_t size, bcl_error *e)
{
    const char *env = getenv("BALLCL_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n;
    if (env && *env)
        n = snprintf(out, size, "%s", env);
    else if (xdg && xdg[0] == '/')
        n = snprintf(out, size, "%s/ballcl", xdg);
    else if (home && *home)
        n = snprintf(out, size, "%s/.cache/ballcl", home);
    else
        return bcl_fail(e, BCL_EXIT_INPUT,
                        "no cache folder: set BALLCL_CACHE_DIR, XDG_CACHE_HOME or HOME");
    if (n < 0 || (size_t)n >= size)
        return bcl_fail(e, BCL_EXIT_INPUT, "cache folder path is too long");
    /* "dir/" and "dir" are the same folder; entry paths read better without "//". */
    for (size_t len = strlen(out); len > 1 && out[len - 1] == '/'; len--)
        out[len - 1] = '\0';
    return BCL_OK;
}

/* The last folder created is chmod'ed to exactly 0700, whatever the umask:
 * its binaries are the user's business. An existing folder keeps its mode. */
int bcl_make_folders(char *path, bcl_error *e)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return bcl_fail(e, BCL_EXIT_INPUT,
                            "cannot create cache folder '%s': it exists and is %s, not a folder",
                            path, bcl_file_type_name(st.st_mode));
        return BCL_OK;
    }
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        int f = bcl_fault_take("mkdir");
        int rc = f ? -1 : mkdir(path, 0700);
        int err = f ? f : errno;
        if (rc != 0 && err == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            rc = 0; /* there already, or made by a concurrent process */
        else if (rc == 0 && saved == '\0')
            (void)chmod(path, 0700);
        char part[PATH_MAX];
        snprintf(part, sizeof part, "%s", path);
        *p = saved;
        if (rc != 0 && err == EEXIST)
            return bcl_fail(e, BCL_EXIT_INPUT,
                            "cannot create cache folder '%s': '%s' exists and is not a folder",
                            path, part);
        if (rc != 0)
            return bcl_fail(e, BCL_EXIT_INPUT, "cannot create cache folder '%s': %s", part,
                            strerror(err));
        if (saved == '\0')
            return BCL_OK;
    }
}

int bcl_cache_dir_create(char *out, size_t size, bcl_error *e)
{
    int rc = bcl_cache_dir(out, size, e);
    return rc ? rc : bcl_make_folders(out, e);
}

/* "program-<64 lower-case hex>.bin", the len bytes at name: the only names
 * list and clear touch. */
static bool entry_name(const char *name, size_t len, char key[2 * BCL_CACHE_KEY_BYTES + 1])
{
    size_t pre = strlen(BCL_CACHE_ENTRY_PREFIX), suf = strlen(BCL_CACHE_ENTRY_SUFFIX);
    size_t hex = 2 * BCL_CACHE_KEY_BYTES;
    if (len != pre + hex + suf || strncmp(name, BCL_CACHE_ENTRY_PREFIX, pre) != 0 ||
        memcmp(name + pre + hex, BCL_CACHE_ENTRY_SUFFIX, suf) != 0)
        return false;
    for (size_t i = 0; i < hex; i++) {
        char c = name[pre + i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    }
    if (key) {
        memcpy(key, name + pre, hex);
        key[hex] = '\0';
    }
    return true;
}

/* ".program-<hex>.bin.XXXXXX": bcl_write_file_atomic's temporary for an entry. */
static bool temp_name(const char *name)
{
    const char *dot = strrchr(name, '.');
    return name[0] == '.' && dot && dot > name && strlen(dot + 1) == 6 &&
           entry_name(name + 1, (size_t)(dot - name - 1), NULL);
}

static int by_file(const void *a, const void *b)
{
    return strcmp(((const bcl_cache_entry_info *)a)->file, ((const bcl_cache_entry_info *)b)->file);
}

/* One listing row: a bad file is listed invalid, with why, not an error. */
static void describe(const char *dir, const char *name, const char *hex, bcl_cache_entry_info *info)
{
    memset(info, 0, sizeof *info);
    snprintf(info->file, sizeof info->file, "%s", name);
    snprintf(info->key, sizeof info->key, "%s", hex);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    if (stat(path, &st) == 0) {
        info->bytes = (uint64_t)st.st_size;
        info->mtime = (int64_t)st.st_mtime;
    }
    /* The key in the name must be the key in the header. */
    bcl_cache_key key;
    for (size_t i = 0; i < BCL_CACHE_KEY_BYTES; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        key.b[i] = (unsigned char)v;
    }
    unsigned char *file = NULL;
    const unsigned char *payload;
    size_t plen;
    bcl_cache_labels labels;
    if (bcl_cache_entry_read(path, &key, &file, &payload, &plen, &labels, info->problem,
                             sizeof info->problem) != BCL_CACHE_FOUND)
        return;
    snprintf(info->device, sizeof info->device, "%s", labels.device);
    snprintf(info->platform, sizeof info->platform, "%s", labels.platform);
    snprintf(info->source, sizeof info->source, "%s", labels.source);
    info->valid = true;
    free(file);
}

static bool take_entry(const char *dir, const char *name, void *row)
{
    char hex[2 * BCL_CACHE_KEY_BYTES + 1];
    if (!entry_name(name, strlen(name), hex))
        return false;
    describe(dir, name, hex, row);
    return true;
}

int bcl_cache_list(const char *dir, bcl_cache_entry_info **entries, size_t *count, bcl_error *e)
{
    void *rows;
    int rc =
        bcl_list_dir(dir, "cache folder", sizeof **entries, take_entry, by_file, &rows, count, e);
    *entries = rows;
    return rc;
}

int bcl_cache_clear(const char *dir, size_t *entries, uint64_t *bytes, size_t *temporaries,
                    bcl_error *e)
{
    size_t ne = 0, nt = 0;
    uint64_t nb = 0;
    DIR *d = opendir(dir);
    if (!d && errno != ENOENT)
        return bcl_fail(e, BCL_EXIT_INPUT, "cannot read cache folder '%s': %s", dir,
                        strerror(errno));
    time_t now = time(NULL);
    struct dirent *de;
    int rc = BCL_OK;
    while (d && rc == BCL_OK && (de = readdir(d)) != NULL) {
        bool entry = entry_name(de->d_name, strlen(de->d_name), NULL);
        if (!entry && !temp_name(de->d_name))
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        struct stat st;
        if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (!entry && now - st.st_mtime < STALE_TEMP_SECONDS)
            continue;
        if (unlink(path) != 0 && errno != ENOENT) {
            rc = bcl_fail(e, BCL_EXIT_INPUT, "cannot remove '%s': %s", path, strerror(errno));
            break;
        }
        if (entry) {
            ne++;
            nb += (uint64_t)st.st_size;
        } else {
            nt++;
        }
    }
    if (d)
        closedir(d);
    if (rc)
        return rc;
    if (entries)
        *entries = ne;
    if (bytes)
        *bytes = nb;
    if (temporaries)
        *temporaries = nt;
    return BCL_OK;
}
