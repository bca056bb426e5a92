/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "conf.h"
#include "ioschedd-conf-write.h"
#include "log.h"
#include "util.h"

#define DROPIN_ID_MAX 64

void dropin_id_done(DropinId *id) {
        id->value = mfree(id->value);
        id->model = mfree(id->model);
}

/* Usable verbatim as a glob, a file name and an ini value. */
static bool id_is_simple(const char *s) {
        return string_in_charset(s, CHARSET_ALNUM "_.:+-", DROPIN_ID_MAX);
}

int dropin_id_for_disk(const Disk *d, DropinIdKind kind, DropinId *ret) {
        DropinId id = {};

        if (!disk_name_is_valid(d->name))
                return -EINVAL;

        if (kind <= DROPIN_ID_WWN && id_is_simple(d->wwn)) {
                id.kind = DROPIN_ID_WWN;
                id.value = strdup(d->wwn);
        } else if (kind <= DROPIN_ID_SERIAL && id_is_simple(d->serial)) {
                id.kind = DROPIN_ID_SERIAL;
                id.value = strdup(d->serial);
                if (id.value && id_is_simple(d->model) && !(id.model = strdup(d->model)))
                        id.value = mfree(id.value);
        } else {
                id.kind = DROPIN_ID_NAME;
                id.value = strdup(d->name);
        }
        if (!id.value)
                return -ENOMEM;
        *ret = id;
        return 0;
}

static const char *const id_kind_names[_DROPIN_ID_MAX] = {
        [DROPIN_ID_WWN] = "wwn",
        [DROPIN_ID_SERIAL] = "serial",
        [DROPIN_ID_NAME] = "name",
};

char *dropin_file_name(const DropinId *id, bool runtime) {
        return strdup_printf("%s%s-%s.conf", runtime ? DROPIN_PREFIX_RUNTIME : DROPIN_PREFIX_PERSISTENT,
                             id_kind_names[id->kind], id->value);
}

int dropin_render(const DropinId *id, char * const *keys, char * const *values, char **ret) {
        _cleanup_(freep) char *buf = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        fputs("# Written by ioschedd (SetPolicy); ResetPolicy or \"ioschedctl reset\" removes it.\n"
              "# Edits by hand are kept until the next SetPolicy for this disk rewrites the file.\n\n", f);
        fprintf(f, "[rule %s]\n", DROPIN_RULE_NAME);
        switch (id->kind) {
        case DROPIN_ID_WWN:
                fprintf(f, "match.wwn = %s\n", id->value);
                break;
        case DROPIN_ID_SERIAL:
                fprintf(f, "match.serial = %s\n", id->value);
                if (id->model)
                        fprintf(f, "match.model = %s\n", id->model);
                break;
        default:
                /* Kernel names never start with "!" in practice, but the name check allows it
                 * and a leading "!" negates a match. */
                fprintf(f, "match.name = %s%s\n", id->value[0] == '!' ? "\\" : "", id->value);
                break;
        }
        for (size_t i = 0; keys && keys[i]; i++)
                fprintf(f, "%s = %s\n", keys[i], values[i]);
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}

int mkdir_parents(const char *path, mode_t mode) {
        char buf[PATH_MAX];
        size_t l = strlen(path);

        if (l == 0 || l >= sizeof(buf))
                return -EINVAL;
        memcpy(buf, path, l + 1);
        for (char *p = buf + 1;; p++) {
                if (*p != '/' && *p != 0)
                        continue;
                char c = *p;
                *p = 0;
                if (mkdir(buf, mode) < 0 && errno != EEXIST)
                        return -errno;
                *p = c;
                if (!c)
                        break;
        }
        return 0;
}

static bool file_name_is_valid(const char *name) {
        return name && *name && name[0] != '.' && !strchr(name, '/') && strlen(name) < NAME_MAX;
}

int dropin_write_atomic(const char *dir, const char *name, const char *text) {
        _cleanup_(closep) int dfd = -1, fd = -1;
        char tmp[NAME_MAX + 1];
        size_t len = strlen(text), done = 0;
        uint64_t rnd = 0;
        int r;

        if (!file_name_is_valid(name))
                return -EINVAL;
        r = mkdir_parents(dir, 0755);
        if (r < 0)
                return r;
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;

        /* Hidden and without ".conf": a reader never takes it for a drop-in. */
        if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) < 0)
                rnd = now_usec() ^ (uint64_t) getpid();
        snprintf(tmp, sizeof(tmp), ".#%.200s.%016llx", name, (unsigned long long) rnd);
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return -errno;

        while (done < len) {
                ssize_t k = write(fd, text + done, len - done);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        r = -errno;
                        goto fail;
                }
                done += k;
        }
        /* The umask may have taken bits away: drop-ins are world-readable like the rest. */
        if (fchmod(fd, 0644) < 0 || fsync(fd) < 0) {
                r = -errno;
                goto fail;
        }
        if (close(TAKE_FD(fd)) < 0) {
                r = -errno;
                goto fail;
        }
        if (renameat(dfd, tmp, dfd, name) < 0) {
                r = -errno;
                goto fail;
        }
        if (fsync(dfd) < 0)
                return -errno;
        return 0;

fail:
        (void) unlinkat(dfd, tmp, 0);
        return r;
}

int dropin_remove(const char *dir, const char *name) {
        _cleanup_(closep) int dfd = -1;

        if (!file_name_is_valid(name))
                return -EINVAL;
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return errno == ENOENT ? 0 : -errno;
        if (unlinkat(dfd, name, 0) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (fsync(dfd) < 0)
                return -errno;
        return 1;
}

char *dropin_dir(const char *config_root, bool runtime) {
        return strdup_printf("%s%s", streq(config_root, "/") ? "" : config_root,
                             runtime ? DROPIN_DIR_RUNTIME : DROPIN_DIR_PERSISTENT);
}

/* The settings the disk's drop-in has now, less those given now: kept. */
static int dropin_kept(const char *path, char * const *keys, char * const *remove, char ***mk,
                       char ***mv) {
        _cleanup_(strv_freep) char **errors = NULL;
        _cleanup_(policy_freep) Policy *old = NULL;
        int r;

        if (access(path, F_OK) < 0)
                return 0;
        old = policy_new();
        if (!old)
                return -ENOMEM;
        r = conf_load_file(path, old, &errors);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                log_warning("%s has errors; it is replaced by the settings given now.", path);
                return 0;
        }
        for (size_t i = 0; i < old->n_rules; i++) {
                const Rule *rule = old->rules[i];

                if (!streq(rule->name, DROPIN_RULE_NAME))
                        continue;
                for (size_t j = 0; j < rule->n_settings; j++) {
                        const Setting *s = &rule->settings[j];

                        if (strv_contains(keys, s->key) || strv_contains(remove, s->key) ||
                            strv_contains(*mk, s->key))
                                continue;
                        if (strv_extend(mk, s->key) < 0 || strv_extend(mv, s->text) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

/* Fills @id with the identity of @d by @kind and @name with its drop-in file's name; the
 * caller frees both (what was set), also on failure. */
static int dropin_id_and_name(const Disk *d, DropinIdKind kind, bool runtime, DropinId *id,
                              char **name) {
        int r;

        r = dropin_id_for_disk(d, kind, id);
        if (r < 0)
                return r;
        *name = dropin_file_name(id, runtime);
        return *name ? 0 : -ENOMEM;
}

int dropin_persist(const char *dir, const Disk *d, char * const *keys, char * const *values,
                   char * const *remove, bool runtime, char **ret_path) {
        _cleanup_(freep) char *name = NULL, *path = NULL, *text = NULL;
        _cleanup_(strv_freep) char **mk = NULL, **mv = NULL, **errors = NULL;
        _cleanup_(policy_freep) Policy *check = NULL;
        _cleanup_(dropin_id_done) DropinId id = {};
        int r;

        assert(dir && d && ret_path);
        r = dropin_id_and_name(d, DROPIN_ID_WWN, runtime, &id, &name);
        if (r < 0)
                return r;
        path = strdup_printf("%s/%s", dir, name);
        if (!path)
                return -ENOMEM;
        r = dropin_kept(path, keys, remove, &mk, &mv);
        if (r < 0)
                return r;
        for (size_t i = 0; keys && keys[i]; i++)
                if (strv_extend(&mk, keys[i]) < 0 || strv_extend(&mv, values[i]) < 0)
                        return -ENOMEM;

        if (strv_isempty(mk)) {
                r = dropin_remove(dir, name);
                if (r < 0)
                        return log_error_errno(r, "Cannot remove %s: %m", path);
                log_info("%s: no settings left, removed %s.", d->name, path);
                *ret_path = TAKE_PTR(path);
                return 0;
        }

        r = dropin_render(&id, mk, mv, &text);
        if (r < 0)
                return r;
        check = policy_new();
        if (!check)
                return -ENOMEM;
        r = conf_parse_text(text, strlen(text), path, check, &errors);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                log_error("Refusing to write a drop-in that does not load: %s",
                          strv_isempty(errors) ? "?" : errors[strv_length(errors) - 1]);
                return -ENOEXEC;
        }
        r = dropin_write_atomic(dir, name, text);
        if (r < 0)
                return log_error_errno(r, "Cannot write %s: %m", path);
        log_info("%s: policy %s saved to %s.", d->name, runtime ? "until reboot" : "persistently", path);
        *ret_path = TAKE_PTR(path);
        return 0;
}

int dropin_reset(const char *dir, const Disk *d, bool runtime, char **ret_removed) {
        _cleanup_(freep) char *removed = NULL;
        int r;

        assert(dir && d && ret_removed);
        for (DropinIdKind k = 0; k < _DROPIN_ID_MAX; k++) {
                _cleanup_(dropin_id_done) DropinId id = {};
                _cleanup_(freep) char *name = NULL;

                r = dropin_id_and_name(d, k, runtime, &id, &name);
                if (r < 0)
                        return r;
                r = dropin_remove(dir, name);
                if (r < 0)
                        return log_error_errno(r, "Cannot remove %s/%s: %m", dir, name);
                if (r == 0)
                        continue;
                log_info("%s: removed %s/%s.", d->name, dir, name);
                free(removed);
                removed = strdup_printf("%s/%s", dir, name);
                if (!removed)
                        return -ENOMEM;
        }
        if (!removed)
                return 0;
        *ret_removed = TAKE_PTR(removed);
        return 1;
}
