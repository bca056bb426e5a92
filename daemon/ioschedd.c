/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ioschedd: keeps every disk at its I/O policy, driven by udev events, and serves the policy
 * and its state on the system bus as org.iosched1.
 */
#include <malloc.h>
#include <signal.h>
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
        const char *config, *root, *config_root, *runtime_dir;
        uint64_t verify_usec;
        unsigned workers;
        int monitor_buffer;
        int log_level;
        bool no_monitor;
        int kernel_events;      /* -1: auto (not on a kernel where switches race), 0, 1 */
} arg = { .root = "/", .config_root = "/", .runtime_dir = ENGINE_RUNTIME_DIR,
          .workers = IOSCHEDD_WORKERS_DEFAULT,
          .monitor_buffer = IOSCHEDD_MONITOR_BUFFER, .log_level = -1, .kernel_events = -1 };

static void help(void) {
        printf("%s [OPTIONS...]\n\n"
               "Keep every disk at its I/O policy and serve it on the system bus (org.iosched1).\n\n"
               "  -h --help                 Show this help\n"
               "     --version              Show the version\n"
               "     --config=FILE          Read FILE alone: no /etc/iosched.conf, no drop-ins;\n"
               "                            SetPolicy and ResetPolicy are refused\n"
               "     --config-root=DIR      Read /etc/iosched.conf and the drop-in directories\n"
               "                            below DIR, and save SetPolicy drop-ins there\n"
               "     --root=DIR             Use DIR as the root for /sys and /run/udev\n"
               "     --runtime-dir=DIR      Announce in DIR that ioschedd handles udev events,\n"
               "                            so that the udev rule steps aside (default %s)\n"
               "     --verify-interval=SEC  Read every disk again every SEC seconds and restore\n"
               "                            what drifted (0, the default: never)\n"
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
               "SIGHUP reloads the configuration, like the Reload method.\n",
               program_invocation_short_name, ENGINE_RUNTIME_DIR, IOSCHEDD_WORKERS_DEFAULT);
}

static int parse_argv(int argc, char *argv[]) {
        enum {
                ARG_CONFIG_ROOT = _CLI_ARG_FIRST,
                ARG_VERIFY,
                ARG_WORKERS,
                ARG_LOG_LEVEL,
                ARG_NO_MONITOR,
                ARG_NO_KERNEL_EVENTS,
                ARG_KERNEL_EVENTS,
                ARG_MONITOR_BUFFER,
        };
        static const struct option options[] = {
                CLI_OPTIONS_COMMON,
                CLI_OPTIONS_PATHS,
                { "config-root", required_argument, NULL, ARG_CONFIG_ROOT },
                { "verify-interval", required_argument, NULL, ARG_VERIFY },
                { "workers", required_argument, NULL, ARG_WORKERS },
                { "log-level", required_argument, NULL, ARG_LOG_LEVEL },
                { "no-monitor", no_argument, NULL, ARG_NO_MONITOR },
                { "no-kernel-events", no_argument, NULL, ARG_NO_KERNEL_EVENTS },
                { "kernel-events", required_argument, NULL, ARG_KERNEL_EVENTS },
                { "monitor-buffer", required_argument, NULL, ARG_MONITOR_BUFFER },
                {}
        };
        int64_t v;
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                CLI_CASES_COMMON(help);
                CLI_CASES_PATHS(arg);
                case ARG_CONFIG_ROOT:
                        arg.config_root = optarg;
                        break;
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
                        if (arg.log_level < 0) {
                                log_error("Invalid --log-level \"%s\".", optarg);
                                return -EINVAL;
                        }
                        break;
                case ARG_NO_MONITOR:
                        arg.no_monitor = true;
                        break;
                case ARG_NO_KERNEL_EVENTS:
                        arg.kernel_events = 0;
                        break;
                case ARG_KERNEL_EVENTS:
                        if (streq(optarg, "auto"))
                                arg.kernel_events = -1;
                        else if (streq(optarg, "yes"))
                                arg.kernel_events = 1;
                        else if (streq(optarg, "no"))
                                arg.kernel_events = 0;
                        else {
                                log_error("Invalid --kernel-events \"%s\": yes, no or auto.", optarg);
                                return -EINVAL;
                        }
                        break;
                case ARG_MONITOR_BUFFER:
                        if (cli_parse_range("--monitor-buffer", optarg, 1024, 1024 * 1024 * 1024,
                                            "bytes", &v) < 0)
                                return -EINVAL;
                        arg.monitor_buffer = (int) v;
                        break;
                default:
                        return -EINVAL;
                }
        if (optind < argc) {
                log_error("%s takes no arguments.", program_invocation_short_name);
                return -EINVAL;
        }
        if (arg.config && !streq(arg.config_root, "/")) {
                log_error("--config and --config-root are mutually exclusive.");
                return -EINVAL;
        }
        return 1;
}

static void notify_status(Manager *m) {
        (void) sd_notifyf(false, "STATUS=%zu disks; %llu writes, %llu skipped, %llu failed%s",
                          m->n_disks, (unsigned long long) m->writes_done,
                          (unsigned long long) m->writes_skipped,
                          (unsigned long long) m->write_errors,
                          strv_isempty(m->config_errors) ? "" : "; the configuration has errors");
}

static int on_status_due(sd_event_source *s, void *userdata) {
        notify_status(userdata);
        return 0;
}

/* Disks arrive after READY too (drivers that load late, hotplug), and writes are counted all
 * along: keep STATUS= true. */
static void on_status_changed(Manager *m) {
        if (m->announcing && m->status_source)
                (void) sd_event_source_set_enabled(m->status_source, SD_EVENT_ONESHOT);
}

static int on_name_acquired(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Manager *m = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        if (e) {
                log_error("Cannot own %s on the bus: %s", BUS_SERVICE, e->message);
                sd_event_exit(m->event, EXIT_FAILURE);
                return 0;
        }
        m->announcing = true;
        log_info("Ready: %zu disks, bus name %s.", m->n_disks, BUS_SERVICE);
        (void) sd_notify(false, "READY=1");
        notify_status(m);
        return 0;
}

/* The first pass is done: only now take the name, so that a client that sees the name sees
 * every disk at its policy. */
static void on_initial_pass_done(Manager *m) {
        int r;

        r = sd_bus_request_name_async(m->bus, NULL, BUS_SERVICE, 0, on_name_acquired, m);
        if (r < 0) {
                log_error_errno(r, "Cannot request the bus name: %m");
                sd_event_exit(m->event, EXIT_FAILURE);
        }
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        (void) sd_notify(false, "RELOADING=1\nSTATUS=Reloading the configuration");
        (void) manager_reload(m, NULL, NULL);
        (void) sd_notify(false, "READY=1");
        notify_status(m);
        return 0;
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
        _cleanup_(sd_event_source_unrefp) sd_event_source *sighup = NULL;
        int r;

        log_set_prefix("ioschedd");
        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : 0;
        if (arg.log_level >= 0)
                log_set_max_level(arg.log_level);

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
                return log_oom(), EXIT_FAILURE;
        m->sysfs_root = arg.root;
        m->config_root = arg.config_root;
        m->config_file = arg.config;
        m->runtime_dir = arg.runtime_dir;
        m->n_workers = arg.workers;
        m->verify_usec = arg.verify_usec;
        m->monitor_enabled = !arg.no_monitor;
        m->kernel_events = kernel_events_wanted();
        m->monitor_buffer = arg.monitor_buffer;
        m->on_initial_pass_done = on_initial_pass_done;
        m->on_status_changed = on_status_changed;

        r = sd_event_default(&m->event);
        if (r < 0)
                return log_error_errno(r, "Cannot create the event loop: %m"), EXIT_FAILURE;
        /* Before any thread exists (both block the signals in our mask, which the workers
         * inherit): SIGTERM and SIGINT end the loop, SIGHUP reloads. */
        r = sd_event_set_signal_exit(m->event, true);
        if (r >= 0)
                r = sd_event_add_signal(m->event, &sighup, SIGHUP | SD_EVENT_SIGNAL_PROCMASK,
                                        on_sighup, m);
        if (r < 0)
                return log_error_errno(r, "Cannot watch signals: %m"), EXIT_FAILURE;
        (void) sd_event_source_set_description(sighup, "sighup");
        r = sd_event_add_defer(m->event, &m->status_source, on_status_due, m);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->status_source, SD_EVENT_OFF);
        if (r < 0)
                return log_error_errno(r, "Cannot add the status event: %m"), EXIT_FAILURE;
        (void) sd_event_source_set_description(m->status_source, "status");

        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                log_warning_errno(r, "Cannot enable the watchdog: %m");

        r = sd_bus_open_system(&m->bus);
        if (r < 0)
                return log_error_errno(r, "Cannot connect to the system bus: %m"), EXIT_FAILURE;
        r = manager_bus_register(m);
        if (r < 0)
                return EXIT_FAILURE;
        r = sd_bus_attach_event(m->bus, m->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return log_error_errno(r, "Cannot attach the bus to the event loop: %m"), EXIT_FAILURE;

        r = manager_start(m);
        if (r < 0)
                return EXIT_FAILURE;
        (void) sd_notifyf(false, "STATUS=Applying the policy to %zu disks", m->n_disks);

        r = sd_event_loop(m->event);
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m"), EXIT_FAILURE;
        log_info("Stopping.");
        (void) sd_notify(false, "STOPPING=1");
        return r;
}

int main(int argc, char *argv[]) {
        return run(argc, argv);
}
