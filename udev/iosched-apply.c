/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iosched-apply: bring disks to their I/O policy, writing only what differs.
 * Run by udev (udev/60-iosched.rules) on block add/change events, or by hand.
 */
#include <stdio.h>

#include "cli.h"
#include "conf.h"
#include "disk-run.h"
#include "engine.h"
#include "log.h"
#include "util.h"
#include "writers-scan.h"

extern char **environ;

enum {
        EXIT_WRITE_FAILED = 1,
        EXIT_CONFIG_ERROR = 2,
        EXIT_NO_SUCH_DISK = 3,
};

static struct {
        bool dry_run, check_config, json, all, verbose, quiet;
        const char *root, *config, *config_root, *runtime_dir;
        char **disks;
} arg;

static char *arg_runtime_dir_buf;

static void arg_free(void) {
        free(arg_runtime_dir_buf);
}

static void help(void) {
        printf("%s [OPTIONS...] (--all | DISK...)\n\n"
               "Bring block devices to their I/O policy, writing only what differs.\n\n"
               "  -h --help                 Show this help\n"
               "     --version              Show the version\n"
               "  -a --all                  Every disk (partitions are always left alone)\n"
               "  -n --dry-run              Show what would be written; write nothing\n"
               "     --check-config         Check the configuration and exit\n"
               "     --json                 Print JSON (one object per disk, one per line)\n"
               "  -v --verbose              Show the file:line of each value; log at debug level\n"
               "  -q --quiet                Print nothing but errors\n"
               CLI_HELP_PATHS
               "\nRun by udev for a disk's event while ioschedd announces itself in the runtime\n"
               "directory, it steps aside: the daemon handles the event.\n\n"
               "Exit status: 0 every disk is at its policy or has none; 1 a write failed (or\n"
               "another failure: the root cannot be opened, out of memory); 2 a configuration\n"
               "file has errors (it was ignored); 3 no such disk or an invalid name; 64 usage\n"
               "error. With several, the lowest non-zero status is returned.\n",
               program_invocation_short_name);
}

static int parse_argv(int argc, char *argv[]) {
        enum {
                ARG_CHECK_CONFIG = _CLI_ARG_FIRST,
                ARG_JSON,
        };
        static const struct option options[] = {
                CLI_OPTIONS_COMMON,
                { "all", no_argument, NULL, 'a' },
                { "dry-run", no_argument, NULL, 'n' },
                { "check-config", no_argument, NULL, ARG_CHECK_CONFIG },
                { "json", no_argument, NULL, ARG_JSON },
                CLI_OPTIONS_PATHS,
                { "verbose", no_argument, NULL, 'v' },
                { "quiet", no_argument, NULL, 'q' },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "hanvq", options, NULL)) >= 0)
                switch (c) {
                CLI_CASES_COMMON(help);
                case 'a':
                        arg.all = true;
                        break;
                case 'n':
                        arg.dry_run = true;
                        break;
                case ARG_CHECK_CONFIG:
                        arg.check_config = true;
                        break;
                case ARG_JSON:
                        arg.json = true;
                        break;
                case 'v':
                        arg.verbose = true;
                        break;
                case 'q':
                        arg.quiet = true;
                        break;
                CLI_CASES_PATHS(arg);
                default:
                        return -EINVAL;
                }

        arg.disks = argv + optind;
        if (!arg.check_config && !arg.all && !*arg.disks) {
                log_error("Give --all or at least one disk; see --help.");
                return -EINVAL;
        }
        if (arg.all && *arg.disks) {
                log_error("--all and disk names are mutually exclusive.");
                return -EINVAL;
        }
        if (cli_paths_finish(&arg.root, arg.config, &arg.config_root, &arg.runtime_dir,
                             &arg_runtime_dir_buf) < 0)
                return -EINVAL;
        return 1;
}

/* Under udev the event's properties are in our environment: they are fresher than udev's
 * database, which is written only after the rules ran. */
static bool udev_event_is_for(const char *disk) {
        const char *devpath = getenv("DEVPATH"), *base;

        if (!devpath || !getenv("ACTION") || !getenv("SUBSYSTEM"))
                return false;
        base = strrchr(devpath, '/');
        return base && streq(base + 1, disk);
}

/* Run by udev for an event while ioschedd handles events: the daemon acts, we do not (one
 * engine per event, engine.h). By hand, or for --all, the helper always acts. */
static bool daemon_handles_event(void) {
        pid_t pid;

        if (arg.all || strv_length(arg.disks) != 1 || !udev_event_is_for(arg.disks[0]))
                return false;
        pid = engine_daemon_pid(arg.runtime_dir);
        if (pid < 0)
                log_debug_errno(pid, "Cannot read %s/%s, acting: %m", arg.runtime_dir, ENGINE_MARKER);
        if (pid <= 0)
                return false;
        log_debug("%s: ioschedd (pid %d) handles this event.", arg.disks[0], (int) pid);
        return true;
}

static const char *disk_arg_name(const char *word) {
        return startswith(word, "/dev/") ?: word;
}

/* Said once a run: under udev, once an event. */
static unsigned told_notes;

/* The host's other writers: looked for when they decide (owner.defer) or are shown (by hand);
 * under udev only once something was written, for its log line. */
static Writers *writers;
static bool writers_scanned;

static const Writers *writers_get_scanned(void) {
        int r;

        if (writers_scanned)
                return writers;
        writers_scanned = true;
        r = writers_scan(arg.root, &writers);
        if (r < 0)
                log_debug_errno(r, "Cannot look for the other writers below %s: %m", arg.root);
        return writers;
}

static void writers_release(void) {
        writers = writers_free(writers);
}

/* A run made without the other writers wrote: who else writes what it changed, for the log
 * line. Under udev the event's properties are udev's whole list. */
static int note_writers(DiskRun *run, const UdevProps *props) {
        const Writers *w = writers_get_scanned();
        _cleanup_(other_writers_freep) OtherWriters *o = NULL;
        char text[256];
        WriterTarget t;
        int r;

        if (!w || !run->disk || !run->plan)
                return 0;
        o = calloc(1, sizeof(OtherWriters));
        if (!o)
                return -ENOMEM;
        writer_target_of(run->disk, text, sizeof(text), &t);
        if (props) {
                t.udev = props;
                t.udev_complete = true;
        }
        r = writers_for_disk(w, &t, o);
        if (r < 0)
                return r;
        for (size_t i = 0; i < run->plan->n_actions; i++) {
                r = action_note_others(&run->plan->actions[i], o);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* What a run shows of a disk: its report, or why there is none. */
static void print_run(const char *name, const DiskRun *run) {
        if (run->state == DISK_RUN_PARTITION) {
                if (!arg.quiet && !arg.json)
                        printf("%s: partition, left alone (policy applies to whole disks)\n", name);
                return;
        }
        if (!run->plan)
                return;
        if (arg.json) {
                report_print_json(stdout, run->disk, run->plan,
                                  run->resolved->n_rules == 0 ? "no rule matches" : NULL);
                fputc('\n', stdout);
        } else if (!arg.quiet)
                report_print_text(stdout, run->disk, run->plan, arg.verbose);
}

/* @listed: the disk was there when the run started (--all listed it, or it was checked): if
 * it is gone by its turn, it went away during the run, which is not an error. */
static int apply_one(Sysfs *s, const Policy *policy, const char *name, bool listed,
                     ReportSummary *total) {
        _cleanup_(disk_run_freep) DiskRun *run = NULL;
        _cleanup_(udev_props_freep) UdevProps *props = NULL;
        const char *n = disk_arg_name(name);
        DiskLoad load = DISK_LOAD_ALL;
        const Writers *w = NULL;
        bool by_udev;
        int r;

        /* Read only what the policy can use, unless a person wants to see everything. */
        if (!arg.verbose && !arg.json)
                policy_disk_load(policy, &load);

        /* Run by udevd for this disk's event: its properties are in our environment, and
         * udevd holds the disk's lock and runs nothing else for it meanwhile. By hand, udevd
         * may be running the rules of this disk's event meanwhile: take the lock. */
        by_udev = udev_event_is_for(n);
        if (by_udev && udev_props_from_strv(environ, &props) < 0)
                return log_oom();
        if (by_udev && streq_ptr(getenv("ACTION"), "change") && disk_event_changes_nothing(n, props))
                return 0;
        /* Under udev, a disk at its policy costs no look for other writers (the files of
         * udev's rules directories and more): only owner.defer needs them before planning. */
        if (!by_udev || (load.attrs & ATTR_BIT(ATTR_OWNER_DEFER)))
                w = writers_get_scanned();
        r = disk_run(s, policy, w, n, props, &load,
                     (arg.dry_run ? DISK_RUN_DRY_RUN : 0) | (by_udev ? 0 : DISK_RUN_LOCK), &run);
        if (r >= 0 && !w && run->summary.written > 0)
                r = note_writers(run, props);
        if (r == -EINVAL) {
                _cleanup_(freep) char *e = escape_for_log(name, 64);

                if (!e)
                        return log_oom();
                log_error("Invalid disk name \"%s\".", e);
                return -EINVAL;
        }
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return log_error_errno(r, "%s: cannot read the disk: %m", n);
        if (run->state == DISK_RUN_GONE && !run->disk && !listed && !by_udev) {
                log_error("No such disk \"%s\".", n);
                return -ENODEV;
        }
        if (run->state == DISK_RUN_GONE && !run->disk)
                log_debug("%s: gone before it could be read.", n);

        if (run->plan) {
                report_log(n, run->plan);
                report_log_notes(n, run->notes, &told_notes, by_udev ? LOG_DEBUG : LOG_NOTICE);
                report_summary_add(total, &run->summary);
        }
        print_run(n, run);
        return 0;
}

/* Every disk asked for. Return: 0, -ENODEV when a name was no disk, another negative errno
 * when the run could not go on (logged). */
static int run_disks(Sysfs *s, const Policy *policy, ReportSummary *total) {
        _cleanup_(strv_freep) char **all = NULL;
        _cleanup_(freep) bool *present = NULL;
        char **disks = arg.disks;
        bool no_disk = false;
        int r;

        if (arg.all) {
                r = sysfs_list_disks(s, &all);
                if (r < 0)
                        return log_error_errno(r, "Cannot list disks: %m");
                disks = all;
        }

        /* Of several disks named, those there now and gone by their turn went away during
         * the run. (One disk: nothing to tell apart, and udev's helper stays lean.) */
        if (!arg.all && strv_length(disks) > 1) {
                present = calloc(strv_length(disks), sizeof(bool));
                if (!present)
                        return log_oom();
                for (size_t i = 0; disks[i]; i++)
                        present[i] = sysfs_disk_exists(s, disk_arg_name(disks[i]));
        }

        for (char **d = disks; *d; d++) {
                r = apply_one(s, policy, *d, arg.all || (present && present[d - disks]), total);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        no_disk = true;
        }
        return no_disk ? -ENODEV : 0;
}

static void print_total(const ReportSummary *total) {
        if (arg.quiet || arg.json)
                return;
        if (arg.dry_run)
                printf("%u would change, %u already right, %u not applicable (dry run: nothing written)\n",
                       total->would_write, total->skipped, total->unsupported + total->refused);
        else
                printf("%u changed, %u already right, %u failed, %u not applicable\n", total->written,
                       total->skipped, total->failed, total->unsupported + total->refused);
}

int main(int argc, char *argv[]) {
        _cleanup_(policy_freep) Policy *policy = NULL;
        _cleanup_(strv_freep) char **errors = NULL;
        _cleanup_(sysfs_freep) Sysfs *s = NULL;
        ReportSummary total = {};
        int r;

        log_set_prefix("iosched-apply");
        if (getenv("ACTION") && getenv("SEQNUM") && !isatty(STDERR_FILENO)) {
                /* Run by udevd: our stderr is only in udevd's debug log. */
                log_set_target(LOG_TARGET_SYSLOG);
                arg.quiet = true;
        }

        atexit(arg_free);
        atexit(writers_release);
        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : 0;
        if (arg.verbose)
                log_set_max_level(LOG_DEBUG);
        else if (!arg.quiet && isatty(STDOUT_FILENO))
                /* The report on stdout already says what changed. */
                log_set_max_level(LOG_WARNING);

        if (daemon_handles_event())
                return 0;

        r = conf_load(arg.config_root, arg.config, &policy, &errors);
        if (r < 0) {
                log_oom();
                return EXIT_FAILURE;
        }
        for (char **e = errors; *e; e++)
                log_error("%s", *e);

        if (arg.check_config) {
                if (!arg.quiet)
                        printf("%zu file(s), %zu rule(s), %zu error(s)\n", strv_length(policy->files),
                               policy->n_rules, strv_length(errors));
                return strv_isempty(errors) ? 0 : EXIT_CONFIG_ERROR;
        }

        r = sysfs_new(arg.root, &s);
        if (r < 0) {
                log_error_errno(r, "Cannot open root %s: %m", arg.root);
                return EXIT_FAILURE;
        }

        r = run_disks(s, policy, &total);
        if (r < 0 && r != -ENODEV)
                return EXIT_FAILURE;
        print_total(&total);

        if (total.failed > 0)
                return EXIT_WRITE_FAILED;
        if (!strv_isempty(errors))
                return EXIT_CONFIG_ERROR;
        if (r == -ENODEV)
                return EXIT_NO_SUCH_DISK;
        return 0;
}
