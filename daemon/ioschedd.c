/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ioschedd: keeps every disk at its I/O policy, driven by udev events, and serves the policy
 * and its state on the system bus as org.iosched1.
 */
#include <malloc.h>
#include <stdio.h>
#include <sys/utsname.h>
#include <systemd/sd-daemon.h>

#include "attr.h"
#include "cli.h"
#include "engine.h"
#include "ioschedd-manager-bus.h"
#include "ioschedd-manager.h"
#include "log.h"
#include "util.h"


static struct {
        const char *config, *root, *config_root, *runtime_dir, *metrics_file;
        uint64_t verify_usec;
        unsigned workers;
        int monitor_buffer;
        int log_level;
        bool no_monitor;
        int kernel_events;      /* -1: auto (not on a kernel where switches race), 0, 1 */
} arg = { .workers = IOSCHEDD_WORKERS_DEFAULT,
          .monitor_buffer = IOSCHEDD_MONITOR_BUFFER, .log_level = -1, .kernel_events = -1 };

static char *arg_runtime_dir_buf;      /* ROOT/run/ioschedd, when --runtime-dir is not given */

static void arg_free(void) {
        free(arg_runtime_dir_buf);
}

static void help(void) {
        printf("%s [OPTIONS...]\n\n"
               "Keep every disk at its I/O policy and serve it on the system bus (org.iosched1).\n\n"
               "  -h --help                 Show this help\n"
               "     --version              Show the version\n"
               CLI_HELP_PATHS
               "     --verify-interval=SEC  Read every disk again every SEC seconds and restore\n"
               "                            what drifted (0, the default: never)\n"
               "     --metrics-file=PATH    Keep the Prometheus text of the state in PATH for\n"
               "                            node_exporter's textfile collector (default: none)\n"
               "     --workers=N            At most N sysfs writes in flight (default %d)\n"
               "     --log-level=LEVEL      err, warning, notice, info (default), debug\n"
               "     --no-monitor           Do not listen to udev events (tests)\n"
               "     --kernel-events=WHEN   Act on the kernel's uevent, before udev's, when the\n"
               "                            policy matches nothing only udev knows: yes, no,\n"
               "                            auto (the default: not on 6.16 to 7.2, where a\n"
               "                            switch made while a udev rule switches the same\n"
               "                            queue can oops the kernel)\n"
               "     --no-kernel-events     The same as --kernel-events=no\n"
               "     --monitor-buffer=BYTES The udev monitor's receive buffer (default 128 MiB;\n"
               "                            tests make it small to provoke lost events)\n\n"
               "The bus is the system bus, or $DBUS_SYSTEM_BUS_ADDRESS. Ready (sd_notify READY=1,\n"
               "and the name org.iosched1 taken) once every disk went through its first pass.\n"
               "SIGHUP reloads the configuration, like the Reload method. SetPolicy saves its\n"
               "drop-ins below the configuration's root; with --config it is refused, and so is\n"
               "ResetPolicy.\n",
               program_invocation_short_name, IOSCHEDD_WORKERS_DEFAULT);
}

static int parse_argv(int argc, char *argv[]) {
        enum {
                ARG_VERIFY = _CLI_ARG_FIRST,
                ARG_WORKERS,
                ARG_LOG_LEVEL,
                ARG_NO_MONITOR,
                ARG_NO_KERNEL_EVENTS,
                ARG_KERNEL_EVENTS,
                ARG_MONITOR_BUFFER,
                ARG_METRICS_FILE,
        };
        static const struct option options[] = {
                CLI_OPTIONS_COMMON,
                CLI_OPTIONS_PATHS,
                { "verify-interval", required_argument, NULL, ARG_VERIFY },
                { "workers", required_argument, NULL, ARG_WORKERS },
                { "log-level", required_argument, NULL, ARG_LOG_LEVEL },
                { "no-monitor", no_argument, NULL, ARG_NO_MONITOR },
                { "no-kernel-events", no_argument, NULL, ARG_NO_KERNEL_EVENTS },
                { "kernel-events", required_argument, NULL, ARG_KERNEL_EVENTS },
                { "monitor-buffer", required_argument, NULL, ARG_MONITOR_BUFFER },
                { "metrics-file", required_argument, NULL, ARG_METRICS_FILE },
                {}
        };
        int64_t v;
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                CLI_CASES_COMMON(help);
                CLI_CASES_PATHS(arg);
                case ARG_VERIFY:
                        if (cli_parse_range("--verify-interval", optarg, 0, 7 * 24 * 3600, "seconds",
                                            &v) < 0)
                                return -EINVAL;
                        arg.verify_usec = (uint64_t) v * 1000000;
                        break;
                case ARG_WORKERS:
                        if (cli_parse_range("--workers", optarg, 1, 1024, NULL, &v) < 0)
                                return -EINVAL;
                        arg.workers = (unsigned) v;
                        break;
                case ARG_LOG_LEVEL:
                        arg.log_level = log_parse_level(optarg);
                        if (arg.log_level < 0)
                                return log_error_errno(EINVAL, "Invalid --log-level \"%s\".", optarg);
                        break;
                case ARG_NO_MONITOR:
                        arg.no_monitor = true;
                        break;
                case ARG_NO_KERNEL_EVENTS:
                        arg.kernel_events = 0;
                        break;
                case ARG_KERNEL_EVENTS:
                        arg.kernel_events = streq(optarg, "auto") ? -1 : streq(optarg, "yes") ? 1 :
                                            streq(optarg, "no") ? 0 : -2;
                        if (arg.kernel_events == -2)
                                return log_error_errno(EINVAL, "Invalid --kernel-events \"%s\": yes, "
                                                       "no or auto.", optarg);
                        break;
                case ARG_MONITOR_BUFFER:
                        if (cli_parse_range("--monitor-buffer", optarg, 1024, 1024 * 1024 * 1024,
                                            "bytes", &v) < 0)
                                return -EINVAL;
                        arg.monitor_buffer = (int) v;
                        break;
                case ARG_METRICS_FILE:
                        /* A file named by an absolute path: the service's working directory
                         * means nothing, and a directory is no file to replace. */
                        if (optarg[0] != '/' || optarg[strlen(optarg) - 1] == '/')
                                return log_error_errno(EINVAL, "Invalid --metrics-file \"%s\": an "
                                                       "absolute path of a file.", optarg);
                        arg.metrics_file = optarg;
                        break;
                default:
                        return -EINVAL;
                }
        if (optind < argc)
                return log_error_errno(EINVAL, "%s takes no arguments.", program_invocation_short_name);
        if (cli_paths_finish(&arg.root, arg.config, &arg.config_root, &arg.runtime_dir,
                             &arg_runtime_dir_buf) < 0)
                return -EINVAL;
        return 1;
}

/* --kernel-events=auto: a kernel uevent's job switches the scheduler while udevd may be running
 * a rule that switches it too (udevd's lock on the disk does not cover an event older than the
 * disk's media, a loop device's LOOP_CONFIGURE: it opens the node by diskseq and skips the lock),
 * which on these kernels can oops (kernel_scheduler_switch_races()). udev's own events come
 * when udevd is done with the disk; its next one waits for our lock. */
static bool kernel_events_wanted(void) {
        struct utsname u;

        if (arg.kernel_events >= 0)
                return arg.kernel_events;
        if (uname(&u) < 0 || !kernel_scheduler_switch_races(u.release))
                return true;
        (void) log_full_errno(LOG_NOTICE, 0, "Kernel %s: two scheduler switches of one queue at once can oops it; acting on "
                   "udev's events, not the kernel's (--kernel-events=yes where no udev rule writes "
                   "a scheduler).", u.release);
        return false;
}

static int run(int argc, char *argv[]) {
        _cleanup_(manager_freep) Manager *m = NULL;
        int r;

        /* Workers allocate what the loop keeps (each disk's reading): with an arena per
         * thread that memory is spread over up to 32 heaps that never shrink. One arena keeps
         * it together; the workers wait on sysfs, not on malloc. */
        (void) mallopt(M_ARENA_MAX, 1);
        /* A reply to GetManagedObjects is one buffer of ~2 KiB per disk, freed once sent.
         * glibc raises its mmap threshold to the size of the largest block freed, so from
         * the second call on such buffers come from the heap and stay there; a fixed
         * threshold keeps them mmapped, returned to the kernel when freed. */
        (void) mallopt(M_MMAP_THRESHOLD, 128 * 1024);

        r = manager_new(&m);
        if (r < 0)
                return r;
        m->sysfs_root = arg.root;
        m->config_root = arg.config_root;
        m->config_file = arg.config;
        m->runtime_dir = arg.runtime_dir;
        m->n_workers = arg.workers;
        m->verify_usec = arg.verify_usec;
        m->monitor_enabled = !arg.no_monitor;
        m->kernel_events = kernel_events_wanted();
        m->monitor_buffer = arg.monitor_buffer;
        m->metrics_path = arg.metrics_file;

        r = manager_connect_bus(m);
        if (r >= 0)
                r = manager_start(m);
        if (r < 0)
                return r;
        r = sd_event_loop(m->event);
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        log_info("Stopping.");
        (void) sd_notify(false, "STOPPING=1");
        return 0;
}

int main(int argc, char *argv[]) {
        int r;

        log_set_prefix("ioschedd");
        atexit(arg_free);
        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : EXIT_SUCCESS;
        if (arg.log_level >= 0)
                log_set_max_level(arg.log_level);
        return run(argc, argv) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
