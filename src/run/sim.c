/*
 * A simulation on the device: the state stays there for the whole run,
 * launches are queued back to back on one in-order queue and the host waits
 * once at the end (unless --sync every asks for the seed's mistake). A state
 * larger than one allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE) is split into
 * chunks of whole balls, one buffer each, and every step launches the kernel
 * once per chunk; balls are independent, so the split changes no bits. The
 * buffers may hold more than the state: bcl_sim_load keeps them when they
 * are large enough (the Python module's frame loop keeps them sized to the
 * largest state it has seen) and grows them otherwise.
 */
#include "run/run.h"
#include "ocl/clock.h"
#include "ocl/clcall.h"
#include "ocl/program.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BALL_BYTES (4 * sizeof(float))
/* Balls each work-item of the state check reads (src/ocl/state_check.c):
 * enough to hide the loop, few enough that any device has items for all
 * its units. */
#define CHECK_BALLS_PER_ITEM 16

typedef struct chunk {
    cl_mem buf;
    size_t first; /* index of the first ball */
    size_t n;     /* balls in this chunk */
} chunk;

struct bcl_sim {
    bcl_context *c;
    size_t n;      /* balls of the state held */
    size_t cap;    /* balls the buffers hold */
    size_t per;    /* balls per buffer (the allocation limit) */
    chunk *chunks; /* the buffers of the capacity; the first nchunks hold the state */
    size_t nchunks;
    cl_mem flag; /* the state check's verdict, one uint; made at the first check */
};

/* BCL_OK, or e set from the call that failed on s's device. */
static int sim_cl(const bcl_sim *s, cl_int st, const char *call, bcl_error *e)
{
    return st == CL_SUCCESS ? BCL_OK : bcl_cl_fail(e, st, call, bcl_context_device(s->c)->name);
}

/* Balls per buffer: whole balls within the allocation limit (lowered by
 * BALLCL_TEST_MAX_ALLOC, bytes, so tests can exercise the split on any
 * device), and few enough for the kernels' uint argument. */
static size_t balls_per_buffer(const bcl_device_info *d)
{
    cl_ulong lim = d->max_alloc ? d->max_alloc : (cl_ulong)1 << 27;
    const char *env = getenv("BALLCL_TEST_MAX_ALLOC");
    unsigned long long v = env && *env ? strtoull(env, NULL, 10) : 0;
    if (v >= BALL_BYTES && v < lim)
        lim = v;
    size_t per = (size_t)(lim / BALL_BYTES);
    return per > UINT32_MAX ? UINT32_MAX : per;
}

size_t bcl_sim_buffers(const bcl_sim *s)
{
    return s->nchunks;
}

bcl_context *bcl_sim_context(const bcl_sim *s)
{
    return s->c;
}

size_t bcl_sim_balls(const bcl_sim *s)
{
    return s->n;
}

/* Releases every buffer: the simulation holds no balls and can hold none. */
static void release_buffers(bcl_sim *s)
{
    for (size_t i = 0; i < (s->cap + s->per - 1) / s->per; i++)
        if (s->chunks[i].buf)
            clReleaseMemObject(s->chunks[i].buf);
    free(s->chunks);
    s->chunks = NULL;
    s->n = s->cap = s->nchunks = 0;
}

/* The state is the capacity's first n balls: the chunks that cover them. */
static void set_balls(bcl_sim *s, size_t n)
{
    s->n = n;
    s->nchunks = (n + s->per - 1) / s->per;
    for (size_t i = 0, first = 0; i < s->nchunks; i++, first += s->per) {
        s->chunks[i].first = first;
        s->chunks[i].n = n - first < s->per ? n - first : s->per;
    }
}

/* A device buffer of `bytes` in *buf (NULL after a failure). */
static int new_buffer(bcl_sim *s, size_t bytes, cl_mem *buf, bcl_error *e)
{
    cl_int st;
    *buf = BCL_CL_CREATE(&st, clCreateBuffer, bcl_context_cl(s->c), CL_MEM_READ_WRITE, bytes, NULL);
    if (st != CL_SUCCESS)
        *buf = NULL;
    return sim_cl(s, st, "clCreateBuffer", e);
}

/* Buffers for cap balls, in chunks of s->per, all holding the state; the
 * old ones released first, so that the device never holds both. */
static int alloc_buffers(bcl_sim *s, size_t cap, bcl_error *e)
{
    release_buffers(s);
    s->chunks = calloc((cap + s->per - 1) / s->per, sizeof *s->chunks);
    if (!s->chunks)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    s->cap = cap;
    set_balls(s, cap);
    for (size_t i = 0; i < s->nchunks; i++) {
        int rc = new_buffer(s, s->chunks[i].n * BALL_BYTES, &s->chunks[i].buf, e);
        if (rc) {
            release_buffers(s);
            return rc;
        }
    }
    return BCL_OK;
}

void bcl_sim_destroy(bcl_sim *s)
{
    if (!s)
        return;
    release_buffers(s);
    if (s->flag)
        clReleaseMemObject(s->flag);
    free(s);
}

/* *out = s when rc is BCL_OK; else s is destroyed and *out NULL. */
static int created(bcl_sim *s, int rc, bcl_sim **out)
{
    if (rc != BCL_OK) {
        bcl_sim_destroy(s);
        s = NULL;
    }
    *out = s;
    return rc;
}

/* A simulation of c with buffers for n balls, not yet written. */
static int sim_new(bcl_context *c, size_t n, bcl_sim **out, bcl_error *e)
{
    *out = NULL;
    if (n == 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "no balls to simulate");
    bcl_sim *s = calloc(1, sizeof *s);
    if (!s)
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    s->c = c;
    s->per = balls_per_buffer(bcl_context_device(c));
    return created(s, alloc_buffers(s, n, e), out);
}

/* Every chunk written from the host's state `from`, or read back into
 * `to` (the other NULL); waited for when blocking. */
static int transfer(bcl_sim *s, const float *from, float *to, cl_bool blocking, bcl_error *e)
{
    cl_command_queue q = bcl_context_queue(s->c);
    int rc = BCL_OK;
    for (size_t i = 0; i < s->nchunks && rc == BCL_OK; i++) {
        chunk *ch = &s->chunks[i];
        size_t bytes = ch->n * BALL_BYTES, at = 4 * ch->first;
        cl_int st = from ? BCL_CL(clEnqueueWriteBuffer, q, ch->buf, blocking, 0, bytes, from + at,
                                  0, NULL, NULL)
                         : BCL_CL(clEnqueueReadBuffer, q, ch->buf, blocking, 0, bytes, to + at, 0,
                                  NULL, NULL);
        rc = sim_cl(s, st, from ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer", e);
    }
    return rc;
}

int bcl_sim_write(bcl_sim *s, const float *state, bcl_error *e)
{
    return transfer(s, state, NULL, CL_TRUE, e);
}

int bcl_sim_read(bcl_sim *s, float *state, bcl_error *e)
{
    return transfer(s, NULL, state, CL_TRUE, e);
}

int bcl_sim_create(bcl_context *c, const float *state, size_t n, bcl_sim **out, bcl_error *e)
{
    int rc = sim_new(c, n, out, e);
    return rc ? rc : created(*out, bcl_sim_write(*out, state, e), out);
}

int bcl_sim_create_tiled(bcl_context *c, const float *block, size_t nblock, size_t n, bcl_sim **out,
                         bcl_error *e)
{
    int rc = sim_new(c, nblock ? n : 0, out, e); /* no block: no balls */
    bcl_sim *s = *out;
    cl_command_queue q = bcl_context_queue(c);
    /* Each buffer: the block written at its start, then the written part
     * copied after itself until the buffer is full. */
    for (size_t i = 0; rc == BCL_OK && i < s->nchunks; i++) {
        chunk *ch = &s->chunks[i];
        size_t done = nblock < ch->n ? nblock : ch->n;
        cl_int st = BCL_CL(clEnqueueWriteBuffer, q, ch->buf, CL_TRUE, 0, done * BALL_BYTES, block,
                           0, NULL, NULL);
        rc = sim_cl(s, st, "clEnqueueWriteBuffer", e);
        while (rc == BCL_OK && done < ch->n) {
            size_t len = done < ch->n - done ? done : ch->n - done;
            st = BCL_CL(clEnqueueCopyBuffer, q, ch->buf, ch->buf, 0, done * BALL_BYTES,
                        len * BALL_BYTES, 0, NULL, NULL);
            rc = sim_cl(s, st, "clEnqueueCopyBuffer", e);
            done += len;
        }
    }
    if (rc == BCL_OK)
        rc = bcl_sim_finish(s, e);
    return created(s, rc, out);
}

static int load(bcl_sim *s, const float *state, size_t n, cl_bool blocking, bcl_error *e)
{
    if (n == 0)
        return bcl_fail(e, BCL_EXIT_INPUT, "no balls to simulate");
    int rc = n > s->cap ? alloc_buffers(s, n, e) : BCL_OK;
    if (rc)
        return rc;
    set_balls(s, n);
    return transfer(s, state, NULL, blocking, e);
}

int bcl_sim_load(bcl_sim *s, const float *state, size_t n, bcl_error *e)
{
    return load(s, state, n, CL_TRUE, e);
}

int bcl_sim_load_async(bcl_sim *s, const float *state, size_t n, bcl_error *e)
{
    return load(s, state, n, CL_FALSE, e);
}

int bcl_sim_finish(bcl_sim *s, bcl_error *e)
{
    return sim_cl(s, BCL_CL(clFinish, bcl_context_queue(s->c)), "clFinish", e);
}

/* The kernel's arguments for chunk ch: its buffer and ball count (every
 * kernel's first two), then, but for the state check (steps 0), the steps
 * and the model's parameters. */
static int set_args(bcl_sim *s, cl_kernel k, const chunk *ch, cl_uint steps, const float *params,
                    bcl_error *e)
{
    cl_uint n32 = (cl_uint)ch->n;
    cl_int st = BCL_CL(clSetKernelArg, k, 0, sizeof(cl_mem), &ch->buf);
    if (st == CL_SUCCESS)
        st = BCL_CL(clSetKernelArg, k, 1, sizeof n32, &n32);
    if (st == CL_SUCCESS && steps > 0)
        st = BCL_CL(clSetKernelArg, k, 2, sizeof steps, &steps);
    unsigned np = steps > 0 ? bcl_model_param_floats(bcl_context_model(s->c)) : 0;
    for (unsigned i = 0; i < np && st == CL_SUCCESS; i++)
        st = BCL_CL(clSetKernelArg, k, 3 + i, sizeof(float), &params[i]);
    return sim_cl(s, st, "clSetKernelArg", e);
}

/* Which arguments the kernel holds: they persist on a kernel, so a launch
 * sets them only when the chunk or the step count changes. */
typedef struct arg_state {
    size_t chunk; /* SIZE_MAX: none set yet */
    cl_uint steps;
} arg_state;

/* The one enqueue loop: one launch of k (ksteps steps; 0: the state check)
 * over every chunk of s, queued and not waited for. empty launches over no
 * balls (n = 0), so that work a driver defers to the first launch is done.
 * *first and *last (each optional) get the events of the first and the
 * last chunk's launch (one event, retained twice, with one chunk); after a
 * failure *first may be set, *last never is. */
static int launch_chunks(bcl_sim *s, const bcl_plan *p, cl_kernel k, cl_uint ksteps, bool empty,
                         arg_state *as, cl_event *first, cl_event *last, bcl_error *e)
{
    cl_command_queue q = bcl_context_queue(s->c);
    const size_t *local = p->launch.local ? &p->launch.local : NULL;
    for (size_t c = 0; c < s->nchunks; c++) {
        chunk ch = s->chunks[c];
        size_t items = (ch.n + p->balls_per_item - 1) / p->balls_per_item;
        size_t global = local ? bcl_round_up(items, *local) : items;
        if (empty)
            ch.n = 0;
        if (c != as->chunk || ksteps != as->steps) {
            int rc = set_args(s, k, &ch, ksteps, p->params, e);
            if (rc)
                return rc;
            *as = (arg_state){c, ksteps};
        }
        bool want_first = c == 0 && first, want_last = c + 1 == s->nchunks && last;
        cl_event ev = NULL;
        cl_int st = BCL_CL(clEnqueueNDRangeKernel, q, k, 1, NULL, &global, local, 0, NULL,
                           want_first || want_last ? &ev : NULL);
        if (st != CL_SUCCESS)
            return sim_cl(s, st, "clEnqueueNDRangeKernel", e);
        if (want_first && want_last)
            clRetainEvent(ev);
        if (want_first)
            *first = ev;
        if (want_last)
            *last = ev;
    }
    return BCL_OK;
}

/* One launch of p's kernel (p->steps_per_launch steps) over every chunk. */
static int launch_plan(bcl_sim *s, const bcl_plan *p, bool empty, cl_event *last, bcl_error *e)
{
    cl_kernel k;
    arg_state as = {SIZE_MAX, 0};
    int rc = bcl_context_kernel(s->c, p->kernel, &k, e);
    return rc ? rc : launch_chunks(s, p, k, p->steps_per_launch, empty, &as, NULL, last, e);
}

int bcl_sim_warmup(bcl_sim *s, const bcl_plan *p, double *ms, bcl_error *e)
{
    double t0 = bcl_now_ms();
    int rc = launch_plan(s, p, true, NULL, e);
    if (rc == BCL_OK)
        rc = bcl_sim_finish(s, e);
    if (ms)
        *ms = bcl_now_ms() - t0;
    return rc;
}

int bcl_sim_enqueue(bcl_sim *s, const bcl_plan *p, cl_event *ev, bcl_error *e)
{
    if (ev)
        *ev = NULL;
    return launch_plan(s, p, false, ev, e);
}

int bcl_sim_check_finite(bcl_sim *s, uint32_t *flag, bcl_error *e)
{
    cl_command_queue q = bcl_context_queue(s->c);
    cl_kernel k;
    int rc = bcl_context_kernel_named(s->c, "bcl_nonfinite", &k, e);
    if (rc == BCL_OK && !s->flag)
        rc = new_buffer(s, sizeof(cl_uint), &s->flag, e);
    if (rc)
        return rc;
    /* The pattern is copied when the fill is queued. */
    cl_uint zero = 0;
    cl_int st =
        BCL_CL(clEnqueueFillBuffer, q, s->flag, &zero, sizeof zero, 0, sizeof zero, 0, NULL, NULL);
    if (st != CL_SUCCESS)
        return sim_cl(s, st, "clEnqueueFillBuffer", e);
    if ((st = BCL_CL(clSetKernelArg, k, 2, sizeof(cl_mem), &s->flag)) != CL_SUCCESS)
        return sim_cl(s, st, "clSetKernelArg", e);
    bcl_plan check = {.balls_per_item = CHECK_BALLS_PER_ITEM};
    arg_state as = {SIZE_MAX, 0};
    if ((rc = launch_chunks(s, &check, k, 0, false, &as, NULL, NULL, e)) != BCL_OK)
        return rc;
    *flag = 0;
    st = BCL_CL(clEnqueueReadBuffer, q, s->flag, CL_FALSE, 0, sizeof(cl_uint), flag, 0, NULL, NULL);
    return sim_cl(s, st, "clEnqueueReadBuffer", e);
}

/* The launches of a run whose profiling events are read: the first, the
 * last and evenly between (all, in a run of at most this many). A run's
 * launches are alike (K steps over the same balls), so their longest is the
 * longest of these, and whatever S is the host pays for events on this many
 * (docs/PERFORMANCE.md, "The host's cost per launch"). */
#define LAUNCH_SAMPLES 8

/* The index of sample j of n over launches 0 .. launches - 1. */
static uint64_t sample_at(unsigned j, unsigned n, uint64_t launches)
{
    return n < 2 ? 0 : (uint64_t)j * (launches - 1) / (n - 1);
}

static struct {
    bcl_steps_fn fn;
    void *arg;
    double every_ms;
} progress;

void bcl_sim_progress(bcl_steps_fn fn, void *arg, double every_ms)
{
    progress.fn = fn;
    progress.arg = arg;
    progress.every_ms = every_ms;
}

/* A line of done steps of steps, if one is due at *next (then set anew). */
static void tell_progress(double *next, uint64_t done, uint64_t steps)
{
    if (bcl_now_ms() < *next)
        return;
    progress.fn(progress.arg, done, steps);
    *next = bcl_now_ms() + progress.every_ms;
}

/* Once the launches are queued, progress comes from the samples (their
 * events taken anyway): a callback notes each one's end, and a thread of its
 * own tells, when a line is due, how far the ended samples go, while the run
 * waits in clFinish as without progress: no device query, no wait of its
 * own. The last of the run and the callbacks to let go of the watch frees it. */
typedef struct progress_watch {
    pthread_mutex_t m;
    pthread_cond_t cv;
    pthread_t thread;
    unsigned refs; /* the run's, and each callback's not yet called */
    int passed;    /* the highest sample ended, -1 for none */
    bool stop;
    double next; /* when the next line is due */
    unsigned nx, kper;
    uint64_t launches, steps;
    struct watch_arg {
        struct progress_watch *w;
        int j;
    } arg[LAUNCH_SAMPLES];
} progress_watch;

static void watch_release(progress_watch *w)
{
    bool last = --w->refs == 0;
    pthread_mutex_unlock(&w->m);
    if (last) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->m);
        free(w);
    }
}

static void CL_CALLBACK sample_ended(cl_event ev, cl_int status, void *p)
{
    (void)ev;
    struct watch_arg *a = p;
    progress_watch *w = a->w;
    pthread_mutex_lock(&w->m);
    if (status >= 0 && a->j > w->passed)
        w->passed = a->j;
    pthread_cond_signal(&w->cv);
    watch_release(w);
}

/* The lines: once a sample has ended, at each interval (with none,
 * BALLCL_PROGRESS_SECONDS=0, at each sample that ends). */
static void *watch_lines(void *p)
{
    progress_watch *w = p;
    int shown = -1; /* the sample the last line told */
    pthread_mutex_lock(&w->m);
    while (!w->stop) {
        if (w->passed == shown) {
            pthread_cond_wait(&w->cv, &w->m);
        } else if (progress.every_ms > 0 && bcl_now_ms() < w->next) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            double ns = (double)ts.tv_nsec + (w->next - bcl_now_ms()) * 1e6;
            ts.tv_sec += (time_t)(ns / 1e9);
            ts.tv_nsec = (long)fmod(ns, 1e9);
            pthread_cond_timedwait(&w->cv, &w->m, &ts);
        } else {
            shown = w->passed;
            uint64_t done = (sample_at((unsigned)shown, w->nx, w->launches) + 1) * w->kper;
            pthread_mutex_unlock(&w->m);
            progress.fn(progress.arg, done, w->steps);
            pthread_mutex_lock(&w->m);
            w->next = bcl_now_ms() + progress.every_ms;
        }
    }
    pthread_mutex_unlock(&w->m);
    return NULL;
}

/* Starts the watch (*out NULL where the thread could not start: no lines). */
static int watch_start(bcl_sim *s, const cl_event *xl, unsigned got, progress_watch *init,
                       progress_watch **out, bcl_error *e)
{
    *out = NULL;
    progress_watch *w = malloc(sizeof *w);
    pthread_condattr_t ca;
    if (!w || pthread_condattr_init(&ca) != 0) {
        free(w);
        return bcl_fail(e, BCL_EXIT_RUNTIME, "out of memory");
    }
    *w = *init;
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&w->m, NULL);
    w->refs = 1;
    w->passed = -1;
    cl_int st = CL_SUCCESS;
    pthread_mutex_lock(&w->m);
    for (unsigned j = 0; j < got && st == CL_SUCCESS; j++) {
        w->arg[j] = (struct watch_arg){w, (int)j};
        w->refs++;
        pthread_mutex_unlock(&w->m); /* a callback may run at once */
        st = BCL_CL(clSetEventCallback, xl[j], CL_COMPLETE, sample_ended, &w->arg[j]);
        pthread_mutex_lock(&w->m);
        if (st != CL_SUCCESS)
            w->refs--;
    }
    if (st == CL_SUCCESS && pthread_create(&w->thread, NULL, watch_lines, w) == 0) {
        pthread_mutex_unlock(&w->m);
        *out = w;
        return BCL_OK;
    }
    watch_release(w);
    return sim_cl(s, st, "clSetEventCallback", e);
}

static void watch_stop(progress_watch *w)
{
    pthread_mutex_lock(&w->m);
    w->stop = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->m);
    pthread_join(w->thread, NULL);
    pthread_mutex_lock(&w->m);
    watch_release(w);
}

static int run(bcl_sim *s, const bcl_plan *p, uint64_t steps, float *read_to, uint32_t *flag,
               bcl_sim_timing *t, bcl_error *e)
{
    memset(t, 0, sizeof *t);
    const bcl_device_info *d = bcl_context_device(s->c);
    unsigned kper = p->steps_per_launch;
    cl_kernel k;
    int rc = bcl_context_kernel(s->c, p->kernel, &k, e);
    if (rc || steps == 0)
        return rc;
    uint64_t launches = (steps + kper - 1) / kper;
    /* The samples' first and last chunk's events. A run timed by the host
     * samples its first and last launch, a bare one none. */
    cl_event xf[LAUNCH_SAMPLES], xl[LAUNCH_SAMPLES];
    unsigned want = p->bare ? 0 : p->untimed_launches ? 2 : LAUNCH_SAMPLES;
    unsigned nx = launches < want ? (unsigned)launches : want, got = 0;
    /* A bounded queue: each queued launch costs the driver host memory (about
     * 670 bytes on PoCL). Every `window` launches the last gets an event and
     * the host waits for the one marked a window earlier: at most two windows
     * are queued, host memory stays flat whatever S is, the device never runs dry. */
    uint64_t window = BCL_QUEUE_WINDOW / s->nchunks ? BCL_QUEUE_WINDOW / s->nchunks : 1;
    cl_event mark = NULL;
    arg_state as = {SIZE_MAX, 0};
    double w0 = bcl_now_ms();
    /* Progress (none in calibrations): at the windows' waits, then from progress_watch. */
    bool watch = progress.fn && p->sync == BCL_SYNC_END && !p->bare && !p->untimed_launches;
    double next = w0 + progress.every_ms;
    for (uint64_t i = 0; i < launches && rc == BCL_OK; i++) {
        uint64_t done = i * kper;
        cl_uint ksteps = (cl_uint)(steps - done < kper ? steps - done : kper);
        bool marked = p->sync == BCL_SYNC_END && !p->bare && i > 0 && (i + 1) % window == 0 &&
                      i + 1 < launches;
        bool sampled = got < nx && i == sample_at(got, nx, launches);
        cl_event f = NULL, l = NULL;
        rc = launch_chunks(s, p, k, ksteps, false, &as, sampled ? &f : NULL,
                           sampled || marked ? &l : NULL, e);
        if (rc != BCL_OK) {
            if (f)
                clReleaseEvent(f);
            break;
        }
        if (marked) {
            if (mark) {
                rc = sim_cl(s, BCL_CL(clWaitForEvents, 1, &mark), "clWaitForEvents", e);
                clReleaseEvent(mark);
                if (watch && rc == BCL_OK)
                    tell_progress(&next, (i + 1 - window) * kper, steps); /* mark's steps */
            }
            mark = l;
            if (sampled)
                clRetainEvent(l);
        }
        if (sampled) {
            xf[got] = f;
            xl[got++] = l;
        }
        if (rc == BCL_OK && p->sync == BCL_SYNC_EVERY) {
            rc = bcl_sim_finish(s, e);
            if (rc == BCL_OK && progress.fn)
                tell_progress(&next, done + ksteps, steps);
        }
    }
    if (mark)
        clReleaseEvent(mark);
    progress_watch *lines = NULL;
    if (rc == BCL_OK && watch && got > 0) {
        progress_watch init = {
            .next = next, .nx = nx, .kper = kper, .launches = launches, .steps = steps};
        rc = watch_start(s, xl, got, &init, &lines, e);
    }
    if (rc == BCL_OK && flag) /* behind the last launch: one wait for all */
        rc = bcl_sim_check_finite(s, flag, e);
    if (rc == BCL_OK && read_to)
        rc = transfer(s, NULL, read_to, CL_FALSE, e);
    if (rc == BCL_OK)
        rc = bcl_sim_finish(s, e);
    if (lines)
        watch_stop(lines);
    if (rc == BCL_OK && progress.fn)
        progress.fn(progress.arg, steps, steps);
    t->wall_ms = bcl_now_ms() - w0;
    t->launches = launches;
    /* Some drivers let clFinish succeed after a launch that died (a lost
     * device, a faulting kernel) and report it only in the event. */
    for (int i = 0; i < 2 && got > 0 && rc == BCL_OK; i++) {
        cl_int exec = CL_COMPLETE;
        cl_int st = BCL_CL(clGetEventInfo, i ? xl[got - 1] : xf[0],
                           CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof exec, &exec, NULL);
        rc = sim_cl(s, st, "clGetEventInfo", e);
        if (rc == BCL_OK && exec < 0)
            rc = sim_cl(s, exec, "a kernel launch (event status)", e);
    }
    /* Each sample's span; the first's start and the last's end are the run's
     * (all a run timed by the host reads). */
    cl_ulong start = 0, stop = 0;
    for (unsigned i = 0; i < got && rc == BCL_OK; i++) {
        bool timed = !p->untimed_launches;
        cl_ulong a = 0, b = 0;
        cl_int st1 = timed || i == 0 ? BCL_CL(clGetEventProfilingInfo, xf[i],
                                              CL_PROFILING_COMMAND_START, sizeof a, &a, NULL)
                                     : CL_SUCCESS;
        cl_int st2 = timed || i + 1 == got ? BCL_CL(clGetEventProfilingInfo, xl[i],
                                                    CL_PROFILING_COMMAND_END, sizeof b, &b, NULL)
                                           : CL_SUCCESS;
        rc = sim_cl(s, st1 != CL_SUCCESS ? st1 : st2, "clGetEventProfilingInfo", e);
        if (i == 0)
            start = a;
        stop = b;
        if (timed && b > a && (double)(b - a) / 1e6 > t->max_launch_ms)
            t->max_launch_ms = (double)(b - a) / 1e6;
    }
    for (unsigned i = 0; i < got; i++) { /* after an error, unread */
        clReleaseEvent(xf[i]);
        clReleaseEvent(xl[i]);
    }
    if (rc != BCL_OK)
        return rc;
    /* Believed only after the check (src/ocl/clock_check.c): every launch
     * reads and writes each ball of its chunk once. A bare run (no samples)
     * has the host's clock alone. */
    bcl_span_check span = {
        .start_ns = start,
        .end_ns = stop,
        .host_ms = t->wall_ms,
        .launches = launches * s->nchunks,
        .bytes = (double)launches * (double)s->n * 2 * BALL_BYTES,
        .flops = (double)steps * (double)s->n * bcl_context_model(s->c)->flops_per_step,
        .compute_units = d->compute_units,
        .clock_mhz = d->clock_mhz,
        .cpu_vector_width = (d->type & BCL_DEVICE_CPU) ? d->native_vector_width_float : 0};
    t->host_clock = got == 0 || !bcl_profiling_check(d->device, &span);
    t->device_ms = t->host_clock ? t->wall_ms : (double)(stop - start) / 1e6;
    return BCL_OK;
}

int bcl_sim_run(bcl_sim *s, const bcl_plan *p, uint64_t steps, bcl_sim_timing *t, bcl_error *e)
{
    return run(s, p, steps, NULL, NULL, t, e);
}

int bcl_sim_run_read_check(bcl_sim *s, const bcl_plan *p, uint64_t steps, float *state,
                           uint32_t *flag, bcl_sim_timing *t, bcl_error *e)
{
    if (steps == 0) {
        memset(t, 0, sizeof *t);
        /* The blocking read-back waits for the check queued before it. */
        int rc = flag ? bcl_sim_check_finite(s, flag, e) : BCL_OK;
        return rc ? rc : bcl_sim_read(s, state, e);
    }
    return run(s, p, steps, state, flag, t, e);
}
