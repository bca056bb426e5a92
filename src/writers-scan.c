/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "log.h"
#include "util.h"
#include "writers-internal.h"
#include "writers-scan.h"
#include "writers-tuned.h"

#define SCAN_FILE_MAX (1024 * 1024)
#define SCAN_DIR_ENTRIES_MAX 4096
#define TUNED_DEPTH_MAX 16
#define TUNED_PROFILES_MAX 64

const char *const writers_udev_rules_dirs[] = {
        "etc/udev/rules.d",
        "run/udev/rules.d",
        "usr/local/lib/udev/rules.d",
        "usr/lib/udev/rules.d",
        "lib/udev/rules.d",
        NULL,
};

/* A name taken from a directory or a file, before it becomes part of a path. */
static bool name_is_safe(const char *name) {
        return string_is_printable(name, NAME_MAX) && !strchr(name, '/') && name[0] != '.';
}

/* A regular file's text; a FIFO or a device at the path is no file of ours. */
static int scan_read(int root_fd, const char *path, char **ret, size_t *ret_size) {
        _cleanup_(closep) int fd = -1;
        struct stat st;

        fd = openat(root_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        return read_fd_bounded(fd, SCAN_FILE_MAX, ret, ret_size);
}

/* The file's text, or NULL when it is absent or unreadable (said at debug level). */
static char *scan_text(int root_fd, const char *path, size_t *ret_size) {
        char *text = NULL;
        int r;

        r = scan_read(root_fd, path, &text, ret_size);
        if (r < 0) {
                if (r != -ENOENT)
                        log_debug_errno(r, "Other writers: cannot read /%s, left out: %m", path);
                errno = r == -ENOMEM ? ENOMEM : 0;
                return NULL;
        }
        return text;
}

/* The files "*@suffix" of @dirs, sorted by name across them; on equal names the earlier
 * directory wins. A winner that masks the name (a link to /dev/null, an empty file) needs no
 * test of its own: /dev/null is no regular file, and an empty file writes nothing. Relative
 * paths. */
static int dirs_list(int root_fd, const char *const *dirs, const char *suffix, char ***ret) {
        _cleanup_(strv_freep) char **names = NULL, **paths = NULL;
        int r;

        names = calloc(1, sizeof(char *));
        paths = calloc(1, sizeof(char *));
        if (!names || !paths)
                return -ENOMEM;
        for (size_t i = 0; dirs[i]; i++) {
                _cleanup_(closedirp) DIR *d = NULL;
                struct dirent *de;
                size_t n = 0;
                int fd;

                fd = openat(root_fd, dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                d = fdopendir(fd);
                if (!d) {
                        close(fd);
                        continue;
                }
                while ((de = readdir(d)) && n < SCAN_DIR_ENTRIES_MAX) {
                        size_t len = strlen(de->d_name), sl = strlen(suffix);

                        if (len <= sl || !streq(de->d_name + len - sl, suffix) || !name_is_safe(de->d_name) ||
                            strv_contains(names, de->d_name))
                                continue;
                        n++;
                        r = strv_extend(&names, de->d_name);
                        if (r < 0)
                                return r;
                        r = strv_push(&paths, strdup_printf("%s/%s", dirs[i], de->d_name));
                        if (r < 0)
                                return r;
                }
        }
        /* Sorted by name, the paths with them. */
        for (size_t i = 1; names[0] && names[i]; i++)
                for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
                        char *t = names[j];

                        names[j] = names[j - 1];
                        names[j - 1] = t;
                        t = paths[j];
                        paths[j] = paths[j - 1];
                        paths[j - 1] = t;
                }
        *ret = TAKE_PTR(paths);
        return 0;
}

static char *slash(const char *rel) {
        return strdup_printf("/%s", rel);
}

typedef int (*ScanParse)(const char *file, const char *text, size_t size, void *userdata);

/* Hand each readable file of @files (relative) to @parse, with its name as the host spells it. */
static int scan_files(int root_fd, char * const *files, ScanParse parse, void *userdata) {
        for (char * const *f = files; *f; f++) {
                _cleanup_(freep) char *text = NULL, *file = NULL;
                size_t size;
                int r;

                text = scan_text(root_fd, *f, &size);
                if (!text) {
                        if (errno == ENOMEM)
                                return -ENOMEM;
                        continue;
                }
                file = slash(*f);
                if (!file)
                        return -ENOMEM;
                r = parse(file, text, size, userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_udev(const char *file, const char *text, size_t size, void *userdata) {
        return writers_add_udev_rules(userdata, file, text, size);
}

static int parse_tlp(const char *file, const char *text, size_t size, void *userdata) {
        return tlp_conf_parse(userdata, file, text, size);
}

static int parse_sysfs_conf(const char *file, const char *text, size_t size, void *userdata) {
        return writers_add_sysfs_conf(userdata, file, text, size);
}

/* udevd runs a program without a "/" from its own directory. */
static bool program_exists(const char *program, void *userdata) {
        int root_fd = *(int *) userdata;
        _cleanup_(freep) char *p = NULL, *q = NULL;

        if (!string_is_printable(program, PATH_MAX) || strstr(program, ".."))
                return true;    /* cannot tell: keep the writer */
        if (program[0] == '/')
                return faccessat(root_fd, program + 1, X_OK, 0) == 0;
        if (strchr(program, '/'))
                return true;
        p = strdup_printf("usr/lib/udev/%s", program);
        q = strdup_printf("lib/udev/%s", program);
        if (!p || !q)
                return true;
        return faccessat(root_fd, p, X_OK, 0) == 0 || faccessat(root_fd, q, X_OK, 0) == 0;
}

static int scan_udev(int root_fd, Writers *w) {
        _cleanup_(strv_freep) char **paths = NULL;
        int r;

        r = dirs_list(root_fd, writers_udev_rules_dirs, ".rules", &paths);
        if (r < 0)
                return r;
        r = scan_files(root_fd, paths, parse_udev, w);
        if (r < 0)
                return r;
        writers_filter_programs(w, program_exists, &root_fd);
        return 0;
}

static bool installed(int root_fd, const char *const *programs) {
        for (size_t i = 0; programs[i]; i++)
                if (faccessat(root_fd, programs[i], X_OK, 0) == 0)
                        return true;
        return false;
}

typedef struct TunedScan {
        int root_fd;
        char **dirs;            /* relative, lowest priority first */
        char **processed;       /* the files loaded: each once, as TuneD's loader does */
        TunedProfile **chain;
        size_t n_chain;
} TunedScan;

/* TuneD's safe_name(): letters, digits, "_.-". */
static bool tuned_name_is_safe(const char *name) {
        return string_in_charset(name, CHARSET_ALNUM "_.-", NAME_MAX) && !streq(name, ".") && !streq(name, "..");
}

/* TuneD's _load_profile(): a profile after the ones it includes. */
static int tuned_load(TunedScan *s, const char *name, unsigned depth) {
        _cleanup_(tuned_profile_freep) TunedProfile *p = NULL;
        _cleanup_(freep) char *path = NULL, *text = NULL, *file = NULL;
        _cleanup_(strv_freep) char **includes = NULL;
        size_t size = 0;
        int r;

        if (!tuned_name_is_safe(name) || depth > TUNED_DEPTH_MAX || s->n_chain >= TUNED_PROFILES_MAX) {
                log_debug("Other writers: TuneD profile name \"%.64s\" skipped.", name);
                return 0;
        }
        /* The last directory with the profile wins; a file already loaded is skipped, so that
         * a profile in /etc may include its namesake in /usr/lib. */
        for (size_t i = strv_length(s->dirs); i > 0 && !text; i--) {
                free(path);
                path = strdup_printf("%s/%s/tuned.conf", s->dirs[i - 1], name);
                if (!path)
                        return -ENOMEM;
                if (strv_contains(s->processed, path))
                        continue;
                text = scan_text(s->root_fd, path, &size);
                if (!text && errno == ENOMEM)
                        return -ENOMEM;
        }
        if (!text) {
                log_debug("Other writers: TuneD profile \"%s\" not found.", name);
                return 0;
        }
        r = strv_extend(&s->processed, path);
        if (r < 0)
                return r;
        file = slash(path);
        if (!file)
                return -ENOMEM;
        r = tuned_profile_parse(name, file, text, size, &p);
        if (r < 0)
                return r;
        r = tuned_profile_includes(p, &includes);
        if (r < 0)
                return r;
        for (char **i = includes; *i; i++) {
                r = tuned_load(s, *i, depth + 1);
                if (r < 0)
                        return r;
        }
        {
                TunedProfile **n = array_append(&s->chain, s->n_chain, sizeof(TunedProfile *));

                if (!n)
                        return -ENOMEM;
                *n = TAKE_PTR(p);
                s->n_chain++;
        }
        return 0;
}

/* tuned-main.conf's profile_dirs (comma separated, absolute), else TuneD's defaults: those
 * of TuneD 2.19 (Debian 12) and the profiles/ subdirectories of later versions. */
static int tuned_dirs(int root_fd, char ***ret) {
        static const char *const defaults[] = {
                "usr/lib/tuned", "usr/lib/tuned/profiles", "etc/tuned", "etc/tuned/profiles", NULL,
        };
        _cleanup_(freep) char *text = NULL;
        _cleanup_(strv_freep) char **dirs = NULL;
        int r;

        text = scan_text(root_fd, "etc/tuned/tuned-main.conf", NULL);
        for (char *line = text, *next; line && *line; line = next) {
                _cleanup_(strv_freep) char **list = NULL;
                const char *v;

                next = line + strcspn(line, "\n");
                if (*next)
                        *next++ = 0;
                v = startswith(strstrip(line), "profile_dirs");
                if (!v)
                        continue;
                v += strspn(v, " \t");
                if (*v != '=')
                        continue;
                r = strv_split(v + 1, ", \t", &list);
                if (r < 0)
                        return r;
                strv_free(dirs);
                dirs = calloc(1, sizeof(char *));
                if (!dirs)
                        return -ENOMEM;
                for (char **d = list; *d; d++)
                        if ((*d)[0] == '/' && (*d)[1] && string_is_printable(*d, PATH_MAX) && !strstr(*d, "..")) {
                                r = strv_extend(&dirs, *d + 1);
                                if (r < 0)
                                        return r;
                        }
        }
        if (!dirs) {
                dirs = strv_copy((char **) defaults);
                if (!dirs)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(dirs);
        return 0;
}

static int scan_tuned(int root_fd, Writers *w) {
        static const char *const tuned[] = { "usr/sbin/tuned", "usr/bin/tuned", NULL };
        static const char *const lists[] = { "etc/tuned/active_profile", "etc/tuned/post_loaded_profile" };
        TunedScan s = { .root_fd = root_fd };
        int r = 0;

        if (!installed(root_fd, tuned))
                return 0;
        r = tuned_dirs(root_fd, &s.dirs);
        if (r < 0)
                return r;
        for (size_t l = 0; l < ELEMENTSOF(lists); l++) {
                _cleanup_(freep) char *text = NULL;
                _cleanup_(strv_freep) char **names = NULL;

                text = scan_text(root_fd, lists[l], NULL);
                if (!text) {
                        if (errno == ENOMEM) {
                                r = -ENOMEM;
                                goto finish;
                        }
                        continue;
                }
                r = strv_split(text, " \t\n", &names);
                if (r < 0)
                        goto finish;
                for (char **n = names; *n; n++) {
                        r = tuned_load(&s, *n, 0);
                        if (r < 0)
                                goto finish;
                }
        }
        r = writers_add_tuned(w, s.chain, s.n_chain);
        if (r == -EBADMSG) {
                log_debug("Other writers: TuneD cannot parse a profile of the active chain; it applies none.");
                r = 0;
        }
finish:
        for (size_t i = 0; i < s.n_chain; i++)
                tuned_profile_free(s.chain[i]);
        free(s.chain);
        strv_free(s.dirs);
        strv_free(s.processed);
        return r;
}

/* TLP's get_disk_dev(): an entry with a link in /dev/disk/by-id is an id ("-partN" is cut). */
static char *tlp_resolve(const char *id, void *userdata) {
        int root_fd = *(int *) userdata;
        _cleanup_(freep) char *path = NULL;
        char link[PATH_MAX];
        const char *base;
        ssize_t k;

        errno = 0;
        if (!name_is_safe(id))
                return NULL;
        path = strdup_printf("dev/disk/by-id/%s", id);
        if (!path)
                return errno = ENOMEM, NULL;
        k = readlinkat(root_fd, path, link, sizeof(link) - 1);
        if (k <= 0)
                return errno = 0, NULL;
        link[k] = 0;
        base = strrchr(link, '/');
        base = base ? base + 1 : link;
        if (!disk_name_is_valid(base))
                return errno = 0, NULL;
        return strdup(base) ?: (errno = ENOMEM, NULL);
}

static int scan_tlp(int root_fd, Writers *w) {
        static const char *const tlp[] = { "usr/sbin/tlp", "usr/bin/tlp", NULL };
        static const char *const dropins[] = { "etc/tlp.d", NULL };
        _cleanup_(tlp_conf_freep) TlpConf *c = NULL;
        _cleanup_(strv_freep) char **files = NULL, **dropin_files = NULL;
        int r;

        if (!installed(root_fd, tlp))
                return 0;
        c = tlp_conf_new();
        if (!c)
                return -ENOMEM;
        /* TLP reads its defaults, the drop-ins, then tlp.conf: the last definition wins. */
        r = dirs_list(root_fd, dropins, ".conf", &dropin_files);
        if (r < 0)
                return r;
        files = strv_copy((char *[]) { (char *) "usr/share/tlp/defaults.conf", NULL });
        if (!files)
                return -ENOMEM;
        for (char **f = dropin_files; *f; f++) {
                r = strv_extend(&files, *f);
                if (r < 0)
                        return r;
        }
        r = strv_extend(&files, "etc/tlp.conf");
        if (r < 0)
                return r;
        r = scan_files(root_fd, files, parse_tlp, c);
        if (r < 0)
                return r;
        return writers_add_tlp(w, c, tlp_resolve, &root_fd);
}

static int scan_sysfsutils(int root_fd, Writers *w) {
        static const char *const dropins[] = { "etc/sysfs.d", NULL };
        _cleanup_(strv_freep) char **files = NULL;
        int r;

        r = dirs_list(root_fd, dropins, ".conf", &files);
        if (r < 0)
                return r;
        r = strv_extend(&files, "etc/sysfs.conf");
        if (r < 0)
                return r;
        return scan_files(root_fd, files, parse_sysfs_conf, w);
}

int writers_scan(const char *root, Writers **ret) {
        static int (*const scanners[])(int root_fd, Writers *w) = {
                scan_udev, scan_tuned, scan_tlp, scan_sysfsutils,
        };
        _cleanup_(writers_freep) Writers *w = NULL;
        _cleanup_(closep) int root_fd = -1;
        _cleanup_(freep) char *cmdline = NULL;
        int r;

        root_fd = open(root ?: "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                return -errno;
        w = writers_new();
        if (!w)
                return -ENOMEM;
        cmdline = scan_text(root_fd, "proc/cmdline", NULL);
        if (!cmdline && errno == ENOMEM)
                return -ENOMEM;
        r = writers_set_cmdline(w, cmdline);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(scanners); i++) {
                r = scanners[i](root_fd, w);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(w);
        return 0;
}
