/* The registry of temporary files removed on a signal (src/util/cleanup.c). */
#ifndef BALLCL_CLEANUP_H
#define BALLCL_CLEANUP_H

/* Registers path for removal on SIGINT/SIGTERM/SIGHUP; returns the slot, or
 * -1 when it could not be registered (the file then stays on a signal). */
int bcl_cleanup_register(const char *path);
/* Folders may be registered too: removed after the files, when empty. */
/* The process group of a helper program (gnuplot) killed on such a signal
 * (0: none). */
void bcl_cleanup_child(int pgid);
/* Forgets a slot (-1 is ignored). */
void bcl_cleanup_unregister(int slot);
/* Blocks the handled signals in this thread (old: a sigset_t to restore),
 * so that a temporary and its registration come into being together. */
void bcl_cleanup_block(void *old);
void bcl_cleanup_unblock(const void *old);
/* Between these, a signal is held: a commit of several renames completes
 * (or is rolled back) before the process exits with 128 + the signal. */
void bcl_cleanup_commit_begin(void);
void bcl_cleanup_commit_end(void);

/* ---- what tools/ and the tests use beside the installed header ---------- */

/* Installs the SIGINT/SIGTERM/SIGHUP handler that removes the temporaries
 * of unfinished outputs and exits with 128 + the signal (130, 143, 129). For
 * programs: the library never installs it itself. */
void bcl_cleanup_install(void);

#endif
