/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The replay driver: runs every file given, or every file of every directory given, through
 * LLVMFuzzerTestOneInput() once. Linked into the fuzz targets of builds without libFuzzer, so
 * that every build (gcc, ASan, valgrind) runs the corpora as unit tests.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "fuzz.h"

#define FUZZ_INPUT_MAX (4 * 1024 * 1024)

static int run_file(const char *path, unsigned *n) {
        _cleanup_(freep) char *data = NULL;
        size_t size;
        int r;

        r = read_file_bounded(AT_FDCWD, path, FUZZ_INPUT_MAX, &data, &size);
        if (r < 0) {
                fprintf(stderr, "%s: %s\n", path, strerror(-r));
                return r;
        }
        /* An exact-size copy, so that ASan sees a read past the end of the input. */
        {
                _cleanup_(freep) uint8_t *copy = malloc(size ?: 1);

                if (!copy)
                        return -ENOMEM;
                memcpy(copy, data, size);
                (void) LLVMFuzzerTestOneInput(copy, size);
        }
        (*n)++;
        return 0;
}

static int filter_regular(const struct dirent *de) {
        return de->d_name[0] != '.';
}

static int run_path(const char *path, unsigned *n) {
        struct dirent **list = NULL;
        struct stat st;
        int k, r = 0;

        if (stat(path, &st) < 0) {
                fprintf(stderr, "%s: %m\n", path);
                return -errno;
        }
        if (!S_ISDIR(st.st_mode))
                return run_file(path, n);

        k = scandir(path, &list, filter_regular, alphasort);
        if (k < 0) {
                fprintf(stderr, "%s: %m\n", path);
                return -errno;
        }
        for (int i = 0; i < k; i++) {
                char p[PATH_MAX];

                snprintf(p, sizeof(p), "%s/%s", path, list[i]->d_name);
                if (r >= 0 && stat(p, &st) >= 0 && S_ISREG(st.st_mode))
                        r = run_file(p, n);
                free(list[i]);
        }
        free(list);
        return r;
}

int main(int argc, char *argv[]) {
        unsigned n = 0;

        if (argc < 2) {
                fprintf(stderr, "Usage: %s FILE|DIR...\nRuns each input through the fuzz target once.\n",
                        program_invocation_short_name);
                return 64;
        }
        for (int i = 1; i < argc; i++)
                if (run_path(argv[i], &n) < 0)
                        return 1;
        if (n == 0) {
                /* An empty or missing corpus must not pass for a clean run. */
                fprintf(stderr, "No inputs found.\n");
                return 1;
        }
        printf("%s: %u input(s), no finding\n", program_invocation_short_name, n);
        return 0;
}
