/*
 * Kernel sources (docs/DESIGN.md): from BALLCL_KERNEL_DIR if set (only
 * there: a wrong setting is an error), else cl/ beside the file holding
 * this code (the Python extension carries its kernels), else cl/ beside
 * the executable's folder (the build tree), else the installed data folder.
 */
#define _GNU_SOURCE /* dladdr */
#include "ocl/ocl.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Our kernels are a few KiB: a larger file is not one of them. */
#define MAX_KERNEL_BYTES ((uint64_t)1 << 20)

#ifndef BALLCL_DATADIR
#define BALLCL_DATADIR "/usr/local/share/ballcl"
#endif

/* Takes path as the kernel folder if it is a folder. */
static bool use_dir(char *out, size_t size, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return false;
    snprintf(out, size, "%s", path);
    return true;
}

int bcl_kernel_dir(char *out, size_t size, bcl_error *e)
{
    const char *env = getenv("BALLCL_KERNEL_DIR");
    if (env && *env)
        return use_dir(out, size, env)
                   ? BCL_OK
                   : bcl_fail(e, BCL_EXIT_INPUT, "BALLCL_KERNEL_DIR '%s' is not a folder", env);
    /* A folder named cl beside this code's file counts only when it holds
     * our kernels (seed.cl): /usr/lib/cl could be anyone's. */
    Dl_info self;
    const char *sep;
    if (dladdr((void *)bcl_kernel_dir, &self) && self.dli_fname &&
        (sep = strrchr(self.dli_fname, '/'))) {
        char cand[PATH_MAX + 16];
        snprintf(cand, sizeof cand, "%.*s/cl/seed.cl", (int)(sep - self.dli_fname), self.dli_fname);
        if (access(cand, R_OK) == 0) {
            cand[strlen(cand) - strlen("/seed.cl")] = '\0';
            snprintf(out, size, "%s", cand);
            return BCL_OK;
        }
    }
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            char cand[PATH_MAX + 8];
            snprintf(cand, sizeof cand, "%s/../cl", exe);
            if (use_dir(out, size, cand))
                return BCL_OK;
        }
    }
    if (use_dir(out, size, BALLCL_DATADIR "/cl"))
        return BCL_OK;
    return bcl_fail(e, BCL_EXIT_INPUT,
                    "cannot find the kernel folder: looked beside the executable and in '%s'; "
                    "set BALLCL_KERNEL_DIR",
                    BALLCL_DATADIR "/cl");
}

int bcl_kernel_source(const char *file, char **text, size_t *len, bcl_error *e)
{
    char dir[PATH_MAX];
    int rc = bcl_kernel_dir(dir, sizeof dir, e);
    if (rc)
        return rc;
    char path[PATH_MAX + 256];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    char *buf;
    size_t used;
    int err = bcl_read_file(path, MAX_KERNEL_BYTES, &buf, &used, NULL);
    if (err == ENOMEM)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory reading '%s'", path);
    if (err)
        return bcl_fail(e, BCL_EXIT_INPUT, "cannot read kernel '%s': %s", path,
                        bcl_read_error(err));
    if (used == 0) {
        free(buf);
        return bcl_fail(e, BCL_EXIT_INPUT, "kernel '%s' is empty", path);
    }
    *text = buf;
    *len = used;
    return BCL_OK;
}

const char *bcl_build_options(const bcl_device_info *d)
{
    /* OpenCL C 1.2, no fast math, no mad, denormals kept (and FP_CONTRACT
     * OFF in the sources); division and square root correctly rounded, as
     * in C, where the device can (docs/MODELS.md): the default allows them
     * 2.5 and 3 ULP. */
    return d && (d->single_fp_config & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT)
               ? "-cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt"
               : "-cl-std=CL1.2";
}

/* Appends len bytes of s to the growing buffer b (NULL after a failed
 * allocation: the caller checks once at the end). */
typedef struct grow {
    char *p;
    size_t len, cap;
} grow;

static void put(grow *b, const char *s, size_t len)
{
    if (!b->p && b->cap)
        return;
    if (b->len + len + 1 > b->cap) {
        size_t cap = 2 * (b->len + len + 1);
        char *q = realloc(b->p, cap);
        if (!q) {
            free(b->p);
            *b = (grow){NULL, 0, 1};
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, len);
    b->len += len;
    b->p[b->len] = '\0';
}

static void putf(grow *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(grow *b, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    put(b, line, n < 0 ? 0 : (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* The update's text once more, under #line so that a compiler's message
 * names the model's file and line. The model's "#pragma ballcl" lines
 * (ballcl's own, docs/MODELS.md) go as blank lines: a driver warns of an
 * unknown pragma. */
static void put_update(grow *b, const char *file, const char *text, size_t len)
{
    putf(b, "#line 1 \"%s\"\n", file);
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) + 1 : len;
        size_t j = i;
        while (j < end && (text[j] == ' ' || text[j] == '\t'))
            j++;
        bool ours = false;
        if (j < end && text[j] == '#') {
            j++;
            while (j < end && (text[j] == ' ' || text[j] == '\t'))
                j++;
            ours = end - j > 14 && strncmp(text + j, "pragma", 6) == 0 &&
                   strncmp(text + j + 6 + strspn(text + j + 6, " \t"), "ballcl", 6) == 0;
        }
        if (ours)
            put(b, "\n", nl ? 1 : 0);
        else
            put(b, text + i, end - i);
        i = end;
    }
    put(b, "\n", 1);
}

int bcl_model_program_source(const bcl_model *m, bool wide, char **src, size_t *len, bcl_error *e)
{
    char *update = NULL, *kernels = NULL;
    size_t ulen, klen;
    int rc = BCL_OK;
    if (m->source) {
        ulen = strlen(m->source);
    } else if ((rc = bcl_kernel_source(m->kernel_file, &update, &ulen, e))) {
        return rc;
    }
    if ((rc = bcl_kernel_source("kernels.cl", &kernels, &klen, e))) {
        free(update);
        return rc;
    }
    const char *text = m->source ? m->source : update;
    /* A model file's messages name it as given; a built-in's, by its
     * file under cl/. */
    const char *file = m->kernel_file;
    grow b = {0};
    putf(&b, "/* %s's kernels: its update and cl/kernels.cl around it. */\n", m->name);
    putf(&b,
         "#pragma OPENCL FP_CONTRACT OFF\n#define BCL_NAME(suffix) %s##suffix\n#define BCL_PARAMS",
         m->name);
    unsigned np = bcl_model_param_floats(m);
    for (unsigned i = 0; i < np; i++)
        putf(&b, " , float p%u", i);
    put(&b, "\n#define BCL_ARGS", strlen("\n#define BCL_ARGS"));
    for (unsigned i = 0; i < np; i++)
        putf(&b, " , p%u", i);
    put(&b, "\n", 1);
    put_update(&b, file, text, ulen);
    if (wide) {
        /* The update again on structure-of-arrays vectors of 8 and 16
         * balls (cl/kernels.cl says why). */
        for (unsigned w = 8; w <= 16; w *= 2) {
            putf(&b,
                 "#line 1 \"ballcl\"\ntypedef struct { float%u x, y, z, w; } bcl_soa%u;\n"
                 "#define float4 bcl_soa%u\n#define update bcl_update%u\n",
                 w, w, w, w);
            put_update(&b, file, text, ulen);
            putf(&b, "#undef float4\n#undef update\n");
        }
        putf(&b, "#define BCL_WIDE 1\n");
    }
    put(&b, "#line 1 \"kernels.cl\"\n", strlen("#line 1 \"kernels.cl\"\n"));
    put(&b, kernels, klen);
    put(&b, bcl_state_check_source, strlen(bcl_state_check_source));
    free(update);
    free(kernels);
    if (!b.p)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    *src = b.p;
    *len = b.len;
    return BCL_OK;
}
