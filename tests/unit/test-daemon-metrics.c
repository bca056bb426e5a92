/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What ioschedd counts and shows for metrics, on a fake kernel (daemon-world.c): a disk's
 * Mismatched keys, DriftCorrected (a value another writer changed, put back; not a first
 * pass, a new policy or a retry), and the textfile (--metrics-file): written once the first
 * pass is over, then after a change, at most once every IOSCHEDD_METRICS_USEC, by a rename, not
 * again for the same text, removed at the end.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "daemon-world.h"
#include "ioschedd-metrics.h"
#include "tests.h"
#include "util.h"

#define SETTINGS "scheduler = mq-deadline\nnr_requests = 48"

static void other_writer(World *w, const char *disk, const char *attr, const char *value) {
        _cleanup_(freep) char *p = strdup_printf("sys/class/block/%s/queue/%s", disk, attr);

        assert_int_equal(fake_write(w->k, p, value), 0);
}

static void run(World *w, DiskObject *d, JobKind kind) {
        assert_int_equal(disk_object_queue(d, kind, NULL, NULL), 0);
        world_run_all(w);
}

static void assert_mismatched(DiskObject *d, const char *keys) {
        _cleanup_(freep) char *got = strv_join(d->mismatched, " ");

        assert_string_equal(strempty(got), keys);
}

TEST(mismatched_and_drift) {
        World *w = world_ran(2, SETTINGS);
        DiskObject *d = world_disk(w, "loop0");
        uint64_t done = w->m->writes_done;

        /* The first pass wrote both keys of both disks: no drift, nothing mismatched. */
        assert_int_equal(done, 4);
        assert_int_equal(w->m->drift_corrected, 0);
        assert_mismatched(d, "");

        /* Another writer; a plan sees it, an apply puts it back: drift. */
        other_writer(w, "loop0", "nr_requests", "32");
        run(w, d, JOB_PLAN);
        assert_mismatched(d, "nr_requests");
        assert_int_equal(w->m->drift_corrected, 0);
        run(w, d, JOB_APPLY);
        assert_mismatched(d, "");
        assert_int_equal(w->m->writes_done, done + 1);
        assert_int_equal(w->m->drift_corrected, 1);

        /* A scheduler switch by another writer resets nr_requests too: two values put back. */
        other_writer(w, "loop0", "scheduler", "none mq-deadline [kyber] bfq");
        other_writer(w, "loop0", "nr_requests", "256");
        run(w, d, JOB_APPLY);
        assert_int_equal(w->m->drift_corrected, 3);

        /* A new policy is no drift: its writes are its own. */
        FILE *f = fopen(w->config, "we");
        assert_non_null(f);
        fputs("[rule all]\nmatch.name = loop*\nscheduler = mq-deadline\nnr_requests = 24\n", f);
        fclose(f);
        assert_int_equal(manager_reload(w->m, NULL, NULL), 0);
        world_run_all(w);
        assert_int_equal(w->m->writes_done, done + 5);
        assert_int_equal(w->m->drift_corrected, 3);
        world_free(w);
}

/* A key the kernel refuses stays in Mismatched; when it takes it at last, that is a retry, not
 * drift. */
TEST(failed_is_no_drift) {
        World *w = world_ran(1, SETTINGS);
        DiskObject *d = world_disk(w, "loop0");

        other_writer(w, "loop0", "nr_requests", "32");
        w->k->busy = 100;       /* EBUSY for every try of the next apply */
        run(w, d, JOB_APPLY);
        assert_mismatched(d, "nr_requests");
        assert_int_equal(w->m->drift_corrected, 0);
        w->k->busy = 0;
        run(w, d, JOB_APPLY);
        assert_mismatched(d, "");
        assert_int_equal(w->m->drift_corrected, 0);
        world_free(w);
}

static char *read_text(const char *path) {
        _cleanup_(freep) char *t = NULL;
        size_t size;

        if (read_file_bounded(AT_FDCWD, path, 1 << 20, &t, &size) < 0)
                return NULL;
        return TAKE_PTR(t);
}

static ino_t inode(const char *path) {
        struct stat st;

        assert_int_equal(stat(path, &st), 0);
        return st.st_ino;
}

static size_t count_files(const char *dir) {
        _cleanup_(closedirp) DIR *d = opendir(dir);
        struct dirent *e;
        size_t n = 0;

        assert_non_null(d);
        while ((e = readdir(d)))
                n += !streq(e->d_name, ".") && !streq(e->d_name, "..");
        return n;
}

/* The metrics name a disk's other writers (a udev rule of the root writing loop1's scheduler)
 * and its holds (none). */
TEST(other_writers_and_holds) {
        World *w = world_ran(2, SETTINGS);
        char *text = NULL;
        size_t size = 0;
        FILE *f;

        assert_int_equal(fake_write(w->k, "etc/udev/rules.d/60-test.rules",
                                    "KERNEL==\"loop1\", ATTR{queue/scheduler}=\"kyber\""),
                         0);
        assert_int_equal(manager_reload(w->m, NULL, NULL), 0);
        world_run_all(w);
        f = open_memstream(&text, &size);
        assert_non_null(f);
        assert_int_equal(manager_metrics_format(w->m, f), 0);
        assert_int_equal(fclose(f), 0);
        assert_non_null(strstr(text, "iosched_other_writers{disk=\"loop1\",key=\"scheduler\",owner=\"udev-rules\"} 1\n"));
        assert_null(strstr(text, "iosched_other_writers{disk=\"loop0\""));
        assert_non_null(strstr(text, "iosched_disk_holds{disk=\"loop0\"} 0\n"));
        free(text);
        world_free(w);
}

TEST(textfile) {
        World *w = world_ran(2, SETTINGS);
        _cleanup_(freep) char *dir = strdup_printf("%s/textfile", w->k->root);
        _cleanup_(freep) char *path = strdup_printf("%s/iosched.prom", dir);
        _cleanup_(freep) char *text = NULL, *again = NULL;
        DiskObject *d = world_disk(w, "loop1");
        ino_t ino;

        assert_int_equal(metrics_file_new(w->m, path, &w->m->metrics_file), 0);
        /* Nothing changed yet: nothing written. */
        assert_null(read_text(path));

        /* The first pass is over (test_first_pass has the manager's call): written at once. */
        metrics_file_start(w->m->metrics_file);
        assert_int_equal(metrics_file_due(w->m->metrics_file), w->mono);
        assert_int_equal(metrics_file_flush(w->m->metrics_file), 1);
        text = read_text(path);
        assert_non_null(text);
        assert_non_null(strstr(text, "iosched_disk_info{disk=\"loop1\",transport=\"loop\""));
        assert_non_null(strstr(text, "iosched_desired_mismatch{disk=\"loop1\",key=\"nr_requests\"} 0\n"));
        _cleanup_(freep) char *writes = strdup_printf("iosched_writes_total %llu\n",
                                                      (unsigned long long) w->m->writes_done);
        assert_non_null(strstr(text, writes));
        ino = inode(path);

        /* Nothing new: the same text is not written again. */
        assert_int_equal(metrics_file_flush(w->m->metrics_file), 0);
        assert_int_equal(inode(path), ino);

        /* Another writer, seen by a plan: due IOSCHEDD_METRICS_USEC after the last write, not
         * before; then written whole, by a rename (a new inode), no temporary file left. */
        world_tick(w, 1000000);
        other_writer(w, "loop1", "nr_requests", "32");
        run(w, d, JOB_PLAN);
        assert_int_equal(metrics_file_due(w->m->metrics_file), w->mono - 1000000 + IOSCHEDD_METRICS_USEC);
        assert_int_equal(metrics_file_flush(w->m->metrics_file), 1);
        again = read_text(path);
        assert_non_null(strstr(again, "iosched_desired_mismatch{disk=\"loop1\",key=\"nr_requests\"} 1\n"));
        assert_int_not_equal(inode(path), ino);
        assert_int_equal(count_files(dir), 1);
        /* A change long after the last write is written at once. */
        world_tick(w, IOSCHEDD_METRICS_USEC);
        run(w, d, JOB_APPLY);
        assert_int_equal(metrics_file_due(w->m->metrics_file), w->mono);

        /* ioschedd stops: the file goes. */
        w->m->metrics_file = metrics_file_free(w->m->metrics_file);
        assert_null(read_text(path));
        world_free(w);
}

/* The file shows what the bus shows: nothing while the first pass runs (a part of the disks,
 * the rest pending), every disk once it is over. */
TEST(first_pass) {
        World *w = world_new(3, SETTINGS);
        _cleanup_(freep) char *path = strdup_printf("%s/iosched.prom", w->k->root);
        _cleanup_(freep) char *text = NULL;

        assert_int_equal(metrics_file_new(w->m, path, &w->m->metrics_file), 0);
        world_run_one(w);
        world_run_one(w);
        assert_int_equal(metrics_file_due(w->m->metrics_file), 0);
        world_run_one(w);
        assert_int_equal(metrics_file_due(w->m->metrics_file), w->mono);
        assert_int_equal(metrics_file_flush(w->m->metrics_file), 1);
        text = read_text(path);
        assert_non_null(text);
        for (unsigned i = 0; i < 3; i++) {
                _cleanup_(freep) char *s = strdup_printf("iosched_disk_info{disk=\"loop%u\"", i);

                assert_non_null(strstr(text, s));
        }
        assert_non_null(strstr(text, "iosched_disks_pending 0\n"));
        world_free(w);
}

DEFINE_TEST_MAIN(NULL, NULL)
