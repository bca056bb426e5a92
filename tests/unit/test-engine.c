/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The engine marker (engine.h): who handles a udev event when both engines are installed. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine.h"
#include "tests.h"
#include "util.h"

static char dir[] = "/tmp/test-engine.XXXXXX";

static void write_marker(const char *text) {
        _cleanup_(freep) char *path = strdup_printf("%s/%s", dir, ENGINE_MARKER);
        FILE *f = fopen(path, "we");

        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

TEST(absent) {
        assert_int_equal(engine_daemon_pid(dir), 0);
        assert_int_equal(engine_daemon_pid("/nonexistent/dir"), 0);
        assert_int_equal(engine_marker_remove(dir), 0);
}

/* The test itself is no ioschedd: its own marker does not count, nor does a dead PID. */
TEST(not_a_daemon) {
        assert_int_equal(engine_marker_write(dir), 0);
        assert_int_equal(engine_daemon_pid(dir), 0);
        assert_int_equal(engine_marker_remove(dir), 0);
        assert_int_equal(engine_daemon_pid(dir), 0);

        write_marker("2147483647\n");
        assert_int_equal(engine_daemon_pid(dir), 0);
        write_marker("junk\n");
        assert_int_equal(engine_daemon_pid(dir), 0);
        write_marker("-5\n");
        assert_int_equal(engine_daemon_pid(dir), 0);
        /* Not this process's marker: left alone. */
        assert_int_equal(engine_marker_remove(dir), 0);
        write_marker("1\n");
        assert_int_equal(engine_marker_remove(dir), 0);
        assert_int_equal(engine_daemon_pid(dir), 0);   /* pid 1 is no ioschedd */
}

/* A process named ioschedd that wrote the marker is the engine, until it dies. */
TEST(live_daemon) {
        int fds[2], status;
        char c;
        pid_t pid;

        assert_int_equal(pipe(fds), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                prctl(PR_SET_NAME, ENGINE_DAEMON_COMM);
                if (engine_marker_write(dir) < 0)
                        _exit(1);
                (void) write(fds[1], "x", 1);
                pause();
                _exit(0);
        }
        assert_int_equal(read(fds[0], &c, 1), 1);
        assert_int_equal(engine_daemon_pid(dir), pid);
        /* Only the writer removes its marker. */
        assert_int_equal(engine_marker_remove(dir), 0);
        assert_int_equal(engine_daemon_pid(dir), pid);

        /* A crash leaves the marker: the PID is no longer a process. */
        kill(pid, SIGKILL);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_int_equal(engine_daemon_pid(dir), 0);
        close(fds[0]);
        close(fds[1]);
}

/* One directory holds the markers of every test: made before the first, removed after the
 * last (with the marker a failed test may have left behind). */
static int setup(void **state) {
        return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
        _cleanup_(freep) char *marker = strdup_printf("%s/%s", dir, ENGINE_MARKER);

        (void) unlink(marker);
        (void) rmdir(dir);
        return 0;
}

DEFINE_TEST_MAIN(setup, teardown)
