/*
 * Fuzz target: the .npy reader (bcl_npy_read) on arbitrary bytes.
 *
 * The reader takes a path, so each input is put in an in-memory file
 * (memfd) and read back through /proc/self/fd: the whole path from open to
 * the parsed floats is exercised, with no disk traffic. Invariants, checked
 * on every input (abort on violation):
 *   - the result is BCL_OK, or BCL_EXIT_INPUT with a one-line message that
 *     names the file (BCL_EXIT_RUNTIME only for "out of memory");
 *   - on success the state is exactly the last 16*N bytes of the input, every
 *     value is finite, and the outputs are untouched on failure.
 */
#define _GNU_SOURCE /* memfd_create */
#include "run/run.h"
#include "measure/timing.h"
#include "models/rng.h"
#include "files/files.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int fd = -1;
static char path[64];

static void check(int ok, const char *what, const bcl_error *e)
{
    if (!ok) {
        fprintf(stderr, "fuzz_npy: invariant broken: %s (message \"%s\")\n", what, e->msg);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fd < 0) {
        fd = memfd_create("fuzz.npy", MFD_CLOEXEC);
        if (fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
        perror("memfd write");
        abort();
    }

    bcl_error e = {0};
    float *sentinel = (float *)(uintptr_t)0x10;
    float *state = sentinel;
    size_t n = 12345;
    int rc = bcl_npy_read(path, &state, &n, &e);
    if (rc == BCL_OK) {
        check(e.code == 0, "an error was set on success", &e);
        check(n >= 1 && state != sentinel && state != NULL, "no balls on success", &e);
        check(size >= 16 * n + 10, "more balls than bytes", &e);
        check(memcmp(state, data + size - 16 * n, 16 * n) == 0, "state is not the file's data", &e);
        for (size_t i = 0; i < 4 * n; i++)
            check(isfinite(state[i]), "a non-finite value was accepted", &e);
        free(state);
    } else {
        check(rc == e.code, "return value and error code differ", &e);
        check(rc == BCL_EXIT_INPUT || (rc == BCL_EXIT_RUNTIME && strstr(e.msg, "out of memory")),
              "wrong exit class", &e);
        check(e.msg[0] != '\0' && strchr(e.msg, '\n') == NULL, "message empty or not one line", &e);
        check(strstr(e.msg, path) != NULL, "message does not name the file", &e);
        check(state == sentinel && n == 12345, "outputs changed on failure", &e);
    }
    bcl_error_clear(&e);
    return 0;
}
