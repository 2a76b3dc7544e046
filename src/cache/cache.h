/*
 * The binary cache (docs/cache.md), internal side: the key and one entry
 * (the folder and its listing are public, ballcl.h).
 *
 * An entry file "program-<64 hex key>.bin" is a fixed 512-byte header and the
 * driver's binary (CL_PROGRAM_BINARIES) as payload. Header, little-endian:
 *
 *   0   8  magic "BCLCACHE"
 *   8   4  format version (BCL_CACHE_FORMAT)
 *  12   4  header size (512)
 *  16  32  key (SHA-256, see bcl_cache_key_make)
 *  48   8  payload length in bytes
 *  56  32  payload checksum (SHA-256 of the payload)
 *  88 160  device name, NUL-padded (for `ballcl cache list` only)
 * 248 128  platform name, NUL-padded (idem)
 * 376  64  kernel file name, NUL-padded (idem)
 * 440  72  zero
 *
 * The labels are for people; nothing trusts them. What decides that an
 * entry may be used is the key (recomputed by the reader, compared with the
 * header's and the file name's) and the payload checksum.
 */
#ifndef BALLCL_CACHE_H
#define BALLCL_CACHE_H

#include "ballcl/ballcl.h"
#include "util/util.h"

#include <limits.h>

/* Bumped when the layout or the key recipe changes: old entries then miss. */
#define BCL_CACHE_FORMAT      1
#define BCL_CACHE_HEADER_SIZE 512
#define BCL_CACHE_KEY_BYTES   32
/* No driver binary of ours comes near this; a header claiming more is bad. */
#define BCL_CACHE_MAX_PAYLOAD  ((uint64_t)1 << 30)
#define BCL_CACHE_ENTRY_PREFIX "program-"
#define BCL_CACHE_ENTRY_SUFFIX ".bin"

typedef struct bcl_cache_key {
    unsigned char b[BCL_CACHE_KEY_BYTES];
} bcl_cache_key;

/* The display labels stored in a header. */
typedef struct bcl_cache_labels {
    char device[160];
    char platform[128];
    char source[64];
} bcl_cache_labels;

/* Contract: a program's key, SHA-256 over the format version, the source,
 * the build options and the device's identity (bcl_device_identity: the
 * cache knows no device), each length-prefixed. */
int bcl_cache_key_make(const unsigned char identity[32], const char *src, size_t len,
                       const char *options, bcl_cache_key *key, bcl_error *e);
/* Writes the 64 lower-case hex digits of key and a NUL into out. */
void bcl_cache_key_hex(const bcl_cache_key *key, char out[2 * BCL_CACHE_KEY_BYTES + 1]);
/* "<dir>/program-<hex>.bin"; BCL_EXIT_INPUT if it does not fit. */
int bcl_cache_entry_path(const char *dir, const bcl_cache_key *key, char *out, size_t size,
                         bcl_error *e);

/* Builds a whole entry (header + payload) in memory; *out is malloc'ed. */
int bcl_cache_entry_encode(const bcl_cache_key *key, const bcl_cache_labels *labels,
                           const void *payload, size_t len, unsigned char **out, size_t *out_len,
                           bcl_error *e);

/* Checks the entry in buf[0, size) (against key unless NULL): *payload into
 * buf and labels (optional), or false with why ("checksum mismatch", ...). */
bool bcl_cache_entry_decode(const unsigned char *buf, size_t size, const bcl_cache_key *key,
                            const unsigned char **payload, size_t *payload_len,
                            bcl_cache_labels *labels, char *why, size_t why_size);

/* Result of reading an entry from disk. */
typedef enum { BCL_CACHE_ABSENT, BCL_CACHE_BAD, BCL_CACHE_FOUND } bcl_cache_lookup;

/* Contract: reads and decodes the entry at path. FOUND: *file malloc'ed, the
 * payload inside it. ABSENT: no such file. BAD: anything else, in why. */
bcl_cache_lookup bcl_cache_entry_read(const char *path, const bcl_cache_key *key,
                                      unsigned char **file, const unsigned char **payload,
                                      size_t *payload_len, bcl_cache_labels *labels, char *why,
                                      size_t why_size);

/* Contract: writes an entry atomically (bcl_write_file_atomic): a reader
 * sees the old entry, none or the whole new one. */
int bcl_cache_entry_write(const char *path, const bcl_cache_key *key,
                          const bcl_cache_labels *labels, const void *payload, size_t len,
                          bcl_error *e);

/* What a program built from source must do to land in the cache later
 * (bcl_context_cache_store): filled by bcl_program_get on a miss. */
typedef struct bcl_cache_slot {
    bool pending; /* an entry should be written */
    char path[PATH_MAX];
    bcl_cache_key key;
    bcl_cache_labels labels;
} bcl_cache_slot;

/* Trust (docs/cache.md): like ssh with its keys, a cache folder, entry or
 * tuned file is used only if it is the user's (or root's) and no one else
 * may write it: else another user could plant a program this user's runs
 * load. True, or false with why starting with BCL_CACHE_UNTRUSTED. */
#define BCL_CACHE_UNTRUSTED "not trusted: "
struct stat;
bool bcl_cache_owner_ok(const struct stat *st, char *why, size_t why_size);
bool bcl_cache_folder_ok(const char *dir, char *why, size_t why_size);

/* mkdir -p for path, each folder it creates 0700 (also the tuned files'). */
int bcl_make_folders(char *path, bcl_error *e);
/* bcl_cache_dir, created by bcl_make_folders. */
int bcl_cache_dir_create(char *out, size_t size, bcl_error *e);

#endif
