/* What group.c (opening, weighing, splitting, loading) and group_exec.c
 * (the one run) share of a group. */
#ifndef BALLCL_GROUP_IMPL_H
#define BALLCL_GROUP_IMPL_H

#include "job/job.h"

typedef struct member member;
typedef int (*member_fn)(member *m, bcl_error *e);

/* The (kernel, local size) pairs a member has launched: a warm-up launch is
 * needed only for a new pair (PoCL compiles per local size). */
#define GROUP_WARM_MAX 16

struct member {
    bcl_group_member pub;
    bcl_group *g;
    bcl_context *ctx;
    bcl_sim *sim;
    bool planned; /* pub.plan is resolved for its shard and the group's request */
    bool stored;  /* the program went to the binary cache after a first launch */
    struct {
        char kernel[64];
        size_t local;
    } warm[GROUP_WARM_MAX];
    size_t nwarm;
    double warm_ms_now; /* the warm-up of the last group_prepare; 0: none was needed */
    /* The device's verdicts (bcl_sim_check_finite) on the state the last
     * load uploaded and the last run read back: non-blocking reads write
     * them, so they live as long as the member. */
    uint32_t in_bad, out_bad;
    /* the phase being run */
    member_fn fn;
    int rc;
    bcl_error err;
    const float *in;
    float *out;
    bool async; /* load: the upload queued, not waited for */
    bool check; /* load: the device checks the state it got */
    uint64_t steps;
    double t0, t1; /* start and end of its run, on the host's monotonic clock */
};

struct bcl_group {
    bcl_group_opts o;
    float params[BCL_MAX_PARAMS];
    member *m;
    size_t count;
    double calibrate_ms;
    bool weighed;         /* every member has a rate */
    double chunk_ball_ms; /* a chunked run's last wall time per ball and launch (0: none yet) */
};

/* Runs fn for every member (only those with balls when busy_only), each on
 * its own thread when more than one works, else on this thread; the first
 * failing member, in list order, gives the error. */
int group_each(bcl_group *g, member_fn fn, bool busy_only, bcl_error *e);
/* Resolves the member's plan for its shard when it is not, warms up a new
 * (kernel, local size) pair, and stores the program in the binary cache
 * after its first launch (bcl_context_cache_store). */
int group_prepare(member *m, bcl_error *e);

/* Uploads each member's shard of state (the group's range): queued and not
 * waited for when async (state must then stay put until a wait), with the
 * device's finite check behind it (member in_bad) when check. */
int group_upload(bcl_group *g, const float *state, bool async, bool check, bcl_error *e);

#endif
