/*
 * Temporary files removed on SIGINT, SIGTERM and SIGHUP (docs/RELIABILITY.md):
 * every temporary ballcl creates is registered here while it exists. The
 * handler unlinks them and exits with 128 plus the signal, as a shell
 * reports a process the signal killed.
 *
 * Async-signal safety: the handler reads only slots whose path is complete
 * (the flag is set after the path, cleared before reuse) and calls only
 * unlink(), rmdir(), kill() and _exit(). During a commit (renames all or
 * none) it only notes the signal, for bcl_cleanup_commit_end.
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
        /* A signal the shell ignores (nohup, a background job) stays ignored. */
        if (sigaction(handled[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigfillset(&sa.sa_mask);
        (void)sigaction(handled[i], &sa, NULL);
    }
}

void bcl_cleanup_block(void *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++)
        sigaddset(&set, handled[i]);
    pthread_sigmask(SIG_BLOCK, &set, (sigset_t *)old);
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
