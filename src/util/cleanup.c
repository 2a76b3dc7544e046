/*
 * Temporary files removed on SIGINT, SIGTERM and SIGHUP (docs/RELIABILITY.md).
 *
 * Every temporary file ballcl creates (the output set of atomic_file.c: user
 * outputs, cache entries, the tuned file) is registered here while it
 * exists. The handler unlinks the registered paths and exits with 128 plus
 * the signal number (130 for Ctrl-C, 143 for SIGTERM), as a shell reports a
 * process killed by the signal.
 *
 * Async-signal safety: the handler only reads slots whose path is complete
 * (the flag is set after the path is written and cleared before the slot is
 * reused), and calls nothing but unlink() and _exit(). While the output set
 * commits (a few renames that must all happen or none), the handler only
 * notes the signal; bcl_cleanup_commit_end then acts on it.
 */
#define _GNU_SOURCE
#include "ballcl/ballcl.h"

#include <limits.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 16

static struct {
    volatile sig_atomic_t used;
    char path[PATH_MAX];
} slots[SLOTS];

static volatile sig_atomic_t committing, pending;

static volatile sig_atomic_t child_group;

/* The helper's process group first (it may be writing into a registered
 * folder), then the files, then the registered folders, now empty. */
static void remove_all(void)
{
    if (child_group > 0)
        (void)kill(-(pid_t)child_group, SIGKILL);
    for (int i = 0; i < SLOTS; i++)
        if (slots[i].used)
            (void)unlink(slots[i].path);
    for (int i = 0; i < SLOTS; i++)
        if (slots[i].used)
            (void)rmdir(slots[i].path);
}

void bcl_cleanup_child(int pgid)
{
    child_group = pgid;
}

static void on_signal(int sig)
{
    if (committing) {
        pending = sig;
        return;
    }
    remove_all();
    _exit(128 + sig);
}

static const int handled[] = {SIGINT, SIGTERM, SIGHUP};

void bcl_cleanup_install(void)
{
    for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++) {
        struct sigaction old, sa;
        /* A signal the user's shell ignores (nohup, a background job) stays
         * ignored. */
        if (sigaction(handled[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigfillset(&sa.sa_mask);
        (void)sigaction(handled[i], &sa, NULL);
    }
}

/* Blocks the handled signals in this thread; old gets the previous mask. */
static void block(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++)
        sigaddset(&set, handled[i]);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

void bcl_cleanup_block(void *old)
{
    block((sigset_t *)old);
}

void bcl_cleanup_unblock(const void *old)
{
    pthread_sigmask(SIG_SETMASK, (const sigset_t *)old, NULL);
}

int bcl_cleanup_register(const char *path)
{
    if (strlen(path) >= PATH_MAX)
        return -1;
    for (int i = 0; i < SLOTS; i++) {
        if (!slots[i].used) {
            strcpy(slots[i].path, path);
            slots[i].used = 1;
            return i;
        }
    }
    return -1;
}

void bcl_cleanup_unregister(int slot)
{
    if (slot >= 0 && slot < SLOTS)
        slots[slot].used = 0;
}

void bcl_cleanup_commit_begin(void)
{
    committing = 1;
}

void bcl_cleanup_commit_end(void)
{
    committing = 0;
    if (pending) {
        remove_all();
        _exit(128 + pending);
    }
}
