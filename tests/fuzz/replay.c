/*
 * Replay driver for the fuzz targets: runs LLVMFuzzerTestOneInput on every
 * file named on the command line (folders are read in name order), so the
 * seed corpus and every crash ever found are ordinary tests in every build,
 * with or without libFuzzer (clang -fsanitize=fuzzer links its own main
 * instead of this one). A target reports a broken invariant by aborting.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Runs the target on one file; returns 0, or 1 if it cannot be read. */
static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            uint8_t *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    int bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "%s: cannot read\n", path);
        free(buf);
        return 1;
    }
    /* An exact-size copy, so that ASan sees a read one byte past the input. */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) {
        free(buf);
        return 1;
    }
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|FOLDER...\n", argv[0]);
        return 2;
    }
    unsigned long replayed = 0;
    int failed = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 2;
        }
        if (!S_ISDIR(st.st_mode)) {
            failed |= replay_file(argv[i]);
            replayed++;
            continue;
        }
        struct dirent **names;
        int n = scandir(argv[i], &names, NULL, by_name);
        if (n < 0) {
            perror(argv[i]);
            return 2;
        }
        for (int j = 0; j < n; j++) {
            if (names[j]->d_name[0] != '.') {
                char path[4096];
                snprintf(path, sizeof path, "%s/%s", argv[i], names[j]->d_name);
                failed |= replay_file(path);
                replayed++;
            }
            free(names[j]);
        }
        free(names);
    }
    printf("replayed %lu inputs\n", replayed);
    /* An empty corpus would make this test pass without testing anything. */
    if (replayed == 0) {
        fprintf(stderr, "no inputs found\n");
        return 1;
    }
    return failed;
}
