/*
 * Whose files the cache folder may hold (docs/cache.md, "Trust"): the rule
 * of the folder, its entries and the tuned and launch-cost files.
 */
#include "files/files.h"
#include "cache/cache.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool bcl_cache_owner_ok(const struct stat *st, char *why, size_t why_size)
{
    uid_t me = geteuid();
    if (st->st_uid != me && st->st_uid != 0)
        return bcl_why(why, why_size,
                       BCL_CACHE_UNTRUSTED "owned by uid %u, not by this user (uid %u)",
                       (unsigned)st->st_uid, (unsigned)me);
    if (st->st_mode & (S_IWGRP | S_IWOTH))
        return bcl_why(why, why_size, BCL_CACHE_UNTRUSTED "mode %04o lets other users write it",
                       (unsigned)(st->st_mode & 07777));
    return true;
}

bool bcl_cache_folder_ok(const char *dir, char *why, size_t why_size)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return bcl_why(why, why_size, "cannot use cache folder '%s': %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return bcl_why(why, why_size, "cannot use cache folder '%s': it is %s, not a folder", dir,
                       bcl_file_type_name(st.st_mode));
    char reason[128];
    if (!bcl_cache_owner_ok(&st, reason, sizeof reason))
        return bcl_why(why, why_size, "cache folder '%s' is %s", dir, reason);
    return true;
}
