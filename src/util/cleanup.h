/* The registry of temporary files removed on a signal (src/util/cleanup.c). */
#ifndef BALLCL_CLEANUP_H
#define BALLCL_CLEANUP_H

/* Registers path (a folder: removed after the files, when empty) for
 * removal on SIGINT/SIGTERM/SIGHUP: the slot, or -1 when it cannot be. */
int bcl_cleanup_register(const char *path);
/* The process group of a helper (gnuplot) killed on such a signal (0: none). */
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
/* Installs the handler (for programs: the library never does). */
void bcl_cleanup_install(void);

#endif
