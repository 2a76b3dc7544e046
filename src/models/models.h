/* Model files' parts (docs/MODELS.md): the checks of their source, the C
 * reference compiled at run time, and the one way to run a reference. */
#ifndef BALLCL_MODELS_H
#define BALLCL_MODELS_H

#include "ballcl/ballcl.h"

/* ---- source scanning (OpenCL C or C) ------------------------------------ */

/* Refuses an unsuffixed floating literal (1.0, .5, 1e3, 0x1p3, decimal or
 * hex, without f/F; an l/L suffix too) in text: BCL_EXIT_INPUT,
 * "PATH:LINE:COL: '0.5' is a double literal: write 0.5f (a model computes in
 * float32 on every side)". Integers are fine (1, 0x10, 10u), and so are
 * 1.0f, 2.f, 1e3f; comments, string and character literals and the
 * #pragma, #include and #line lines are skipped; a backslash-newline joins
 * lines, as the preprocessor does, and positions are those of the file. */
int bcl_source_check_literals(const char *text, size_t len, const char *path, bcl_error *e);

/* Finds the one definition of `update` (a `float4 update(...)` followed by
 * `{` outside any braces; prototypes are passed over) and checks its
 * signature: returns float4, takes float4 NAME, then exactly nparams
 * parameters "float NAME" (names free; `const` allowed). BCL_EXIT_INPUT,
 * "PATH:LINE: ..." for a wider or narrower state (the limit: 4 floats), a
 * count that differs from the pragmas' (param_names, nparams of them, are
 * listed), a parameter not a float, two definitions; "PATH: no 'float4
 * update(float4 b, ...)' function" when there is none. *line (optional):
 * update's line, 1-based. */
int bcl_source_check_update(const char *text, size_t len, const char *path, unsigned nparams,
                            const char *const *param_names, unsigned *line, bcl_error *e);

/* ---- the C reference of a user model ------------------------------------ */

typedef struct bcl_cref bcl_cref;

/* Reads FILE.c (path), refuses double literals and a bad update signature
 * (the functions above), and builds it with the system C compiler
 * ($BALLCL_CC if set, a program's path or a name on PATH, else "cc" on
 * PATH) with ballcl's own flags, never the user's CFLAGS: -std=c11 -O2
 * -ffp-contract=off -fno-fast-math, -fexcess-precision=standard and -fopenmp
 * where the compiler takes them, -lm. The program is a prelude (the float4
 * struct, <tgmath.h> so that sqrt of a float is the float sqrt, as in
 * OpenCL C, and #line 1 "FILE.c" so that errors point into FILE.c), the
 * user's text, and a driver that steps the balls read from stdin.
 *
 * With use_cache and cache_dir (a folder, made if missing along with its
 * "reference" folder; NULL is no cache: this layer cannot resolve the
 * user's cache folder, bcl_cache_dir, so the caller does), the executable
 * is kept as
 * <cache_dir>/reference/<SHA-256 of the program, the flags and the
 * compiler's identity> and a later open reuses it without compiling; else it
 * is built in a private temporary folder ($TMPDIR, else /tmp), removed as
 * soon as the executable is open: r holds it open until bcl_cref_close and
 * runs it through /proc/self/fd, so nothing is left behind. A
 * reference folder another user may write is refused (they could plant an
 * executable).
 * BCL_EXIT_INPUT: an unreadable file, a refused literal or signature, no
 * compiler (the message names $BALLCL_CC or cc), a file that does not compile (the
 * compiler's first error lines, "FILE.c:LINE:...", the whole log in the
 * error's detail). nparams is at most BCL_MAX_PARAMS. */
int bcl_cref_open(const char *path, unsigned nparams, const char *const *param_names,
                  const char *cache_dir, bool use_cache, bcl_cref **out, bcl_error *e);

/* Applies `steps` steps to the n balls of state (4n floats, in place) with
 * params (nparams of them) in a child process, within limit_s seconds (0:
 * 60 s + 1 s per 1e8 ball-steps). flush_denormals: the child sets the CPU's
 * flush-to-zero and denormals-are-zero modes first (x86 MXCSR, aarch64
 * FPCR.FZ; elsewhere an error), to match a device that flushes. A child that
 * is killed by a signal, exits non-zero, writes short or runs past the limit
 * (SIGTERM, then SIGKILL) gives BCL_EXIT_INPUT, one line naming FILE.c;
 * state is then undefined. The states stream through pipes: any n fits. */
int bcl_cref_run(bcl_cref *r, float *state, size_t n, uint64_t steps, const float *params,
                 double limit_s, bool flush_denormals, bcl_error *e);

/* Closes r's executable and frees r; NULL is fine. */
void bcl_cref_close(bcl_cref *r);

/* ---- running a model's reference (src/models/model_file.c) ---- */
/* steps steps of model m's reference on n balls of state, in place: a
 * built-in's C function, or a model file's C reference in its child
 * (flush_denormals: as a device that flushes float denormals does). */
int bcl_model_reference(const bcl_model *m, float *state, size_t n, uint64_t steps, const float *p,
                        bool flush_denormals, bcl_error *e);

/* True when m has a reference to validate against (every built-in model;
 * a model file given one). */
bool bcl_model_has_reference(const bcl_model *m);
/* What names the model in files and records: its name for a built-in
 * model, "<name>-<first 16 hex digits of its digest>" for a model file. */
const char *bcl_model_key(const bcl_model *m);
/* Gives model file m the C reference at path (bcl_model_spec says how);
 * for the Python module, whose NumPy reference is its own, never called. */
int bcl_model_file_reference(bcl_model *m, const char *path, const char *cache_dir, bool use_cache,
                             double limit_s, bcl_error *e);

#endif
