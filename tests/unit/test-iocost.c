/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * iocost: the kernel's io.cost.* printouts, mountinfo, the static-key kernels, systemd's hwdb
 * solutions, the planner, and disk_run() on a fake tree with a fake cgroup2 root.
 *
 * The printouts follow the format strings of ioc_qos_prfill() and ioc_cost_model_prfill() in
 * Debian's 6.1 (6.1.192), 6.12 (6.12.117) and 7.3 (7.3.4) block/blk-iocost.c, with the kernel's
 * own parameters (autop[]) for the ctrl=auto lines; test_real_printouts() has lines read from
 * those kernels (tests/kernels/iocost).
 */
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "apply.h"
#include "conf.h"
#include "fake-kernel.h"
#include "fixture.h"
#include "iocost.h"
#include "report.h"
#include "tests.h"
#include "writers-scan.h"
#include "util.h"

/* ctrl=auto on an NVMe disk (AUTOP_SSD_FAST), as set up by a first write of enable=1 */
#define QOS_AUTO "259:0 enable=1 ctrl=auto rpct=0.00 rlat=5000 wpct=0.00 wlat=5000 min=1.00 max=10000.00"
#define MODEL_AUTO \
        "259:0 ctrl=auto model=linear rbps=3102524156 rseqiops=724816 rrandiops=778122 " \
        "wbps=1742780862 wseqiops=425702 wrandiops=443193"
/* what systemd-iocost leaves: user qos and model */
#define QOS_USER "8:0 enable=1 ctrl=user rpct=95.00 rlat=5000 wpct=95.50 wlat=10000 min=50.00 max=150.00"
#define MODEL_USER \
        "8:0 ctrl=user model=linear rbps=2706339840 rseqiops=89698 rrandiops=110036 " \
        "wbps=1063126016 wseqiops=135560 wrandiops=130734"

TEST(parse_lines) {
        _cleanup_(iocost_state_done) IocostState st = {};
        _cleanup_(freep) char *devnum = NULL;

        assert_int_equal(iocost_parse_line(ATTR_FILE_IOCOST_QOS, QOS_AUTO, &devnum, &st), 0);
        assert_string_equal(devnum, "259:0");
        assert_int_equal(st.num[ATTR_IOCOST_ENABLE], 1);
        assert_int_equal(st.num[ATTR_IOCOST_CTRL], 0);
        assert_int_equal(st.num[ATTR_IOCOST_RLAT], 5000);
        assert_int_equal(st.num[ATTR_IOCOST_MIN], 100);
        assert_int_equal(st.num[ATTR_IOCOST_MAX], 1000000);
        assert_string_equal(st.raw, "enable=1 ctrl=auto rpct=0.00 rlat=5000 wpct=0.00 wlat=5000 min=1.00 max=10000.00");
        iocost_state_done(&st);

        assert_int_equal(iocost_parse_line(ATTR_FILE_IOCOST_QOS, QOS_USER "\n", NULL, &st), 0);
        assert_int_equal(st.num[ATTR_IOCOST_CTRL], 1);
        assert_int_equal(st.num[ATTR_IOCOST_RPCT], 9500);
        assert_int_equal(st.num[ATTR_IOCOST_WPCT], 9550);
        assert_int_equal(st.num[ATTR_IOCOST_WLAT], 10000);
        assert_int_equal(st.num[ATTR_IOCOST_MIN], 5000);
        assert_int_equal(st.num[ATTR_IOCOST_MAX], 15000);
        iocost_state_done(&st);

        assert_int_equal(iocost_parse_line(ATTR_FILE_IOCOST_MODEL, MODEL_AUTO, NULL, &st), 0);
        assert_int_equal(st.num[ATTR_IOCOST_MODEL_CTRL], 0);
        assert_int_equal(st.num[ATTR_IOCOST_MODEL_RBPS], 3102524156LL);
        assert_int_equal(st.num[ATTR_IOCOST_MODEL_WRANDIOPS], 443193);
        iocost_state_done(&st);
        assert_int_equal(iocost_parse_line(ATTR_FILE_IOCOST_MODEL, MODEL_USER, NULL, &st), 0);
        assert_int_equal(st.num[ATTR_IOCOST_MODEL_CTRL], 1);
        iocost_state_done(&st);

        /* a later kernel's extra field is ignored */
        assert_int_equal(iocost_parse_line(ATTR_FILE_IOCOST_QOS, QOS_USER " future=3", NULL, &st), 0);
        iocost_state_done(&st);

        /* what does not parse */
        static const char *const bad_qos[] = {
                "",
                "259:0",
                "sda enable=1 ctrl=user rpct=95.00 rlat=5000 wpct=95.50 wlat=10000 min=50.00 max=150.00",
                "8:0 enable=1 ctrl=user rpct=95.00 rlat=5000 wpct=95.50 wlat=10000 min=50.00",
                "8:0 enable=1 ctrl=user rpct=95.00 rlat=5000 wpct=95.50 wlat=10000 min=50.00 max=150.00 max=1.00",
                "8:0 enable=2 ctrl=user rpct=95.00 rlat=5000 wpct=95.50 wlat=10000 min=50.00 max=150.00",
                "8:0 enable=1 ctrl=manual rpct=95.00 rlat=5000 wpct=95.50 wlat=10000 min=50.00 max=150.00",
                "8:0 enable=1 ctrl=user rpct=-1 rlat=5000 wpct=95.50 wlat=10000 min=50.00 max=150.00",
                "8:0 enable=1 ctrl=user rpct=95.00 rlat=5e3 wpct=95.50 wlat=10000 min=50.00 max=150.00",
                "8:0 enable=1 ctrl=user rpct=95.00 rlat=4294967296 wpct=95.50 wlat=10000 min=50.00 max=150.00",
                "8:0 enable=1 ctrl=user rpct=95.00 rlat wpct=95.50 wlat=10000 min=50.00 max=150.00",
                /* what the kernel cannot hold */
                "8:0 enable=1 ctrl=user rpct=100.01 rlat=5000 wpct=95.50 wlat=10000 min=50.00 max=150.00",
                "8:0 enable=1 ctrl=user rpct=95.00 rlat=5000 wpct=95.50 wlat=10000 min=0.99 max=150.00",
                "8:0 enable=1 ctrl=user rpct=95.00 rlat=5000 wpct=95.50 wlat=10000 min=50.00 max=10000.01",
                "8:0 enable=1 ctrl=user rpct=95.00 rlat=5000 wpct=95.50 wlat=10000 min=50.00 max=15.00",
        };
        for (size_t i = 0; i < ELEMENTSOF(bad_qos); i++)
                if (iocost_parse_line(ATTR_FILE_IOCOST_QOS, bad_qos[i], NULL, &st) != -EBADMSG)
                        fail_msg("parsed: %s", bad_qos[i]);
        assert_int_equal(iocost_parse_line(ATTR_FILE_IOCOST_MODEL,
                                           "8:0 ctrl=user model=quadratic rbps=1 rseqiops=1 rrandiops=1 "
                                           "wbps=1 wseqiops=1 wrandiops=1", NULL, &st), -EBADMSG);
        assert_int_equal(iocost_parse_line(ATTR_FILE_IOCOST_MODEL,
                                           "8:0 ctrl=user rbps=1 rseqiops=1 rrandiops=1 wbps=1 wseqiops=1 "
                                           "wrandiops=1", NULL, &st), -EBADMSG);
        assert_int_equal(iocost_parse_line(ATTR_FILE_IOCOST_MODEL, "8:0 ctrl=user model=linear rbps=18446744073709551615 "
                                           "rseqiops=1 rrandiops=1 wbps=1 wseqiops=1 wrandiops=1", NULL, &st), -EBADMSG);
        /* a qos line is no model line */
        assert_int_equal(iocost_parse_line(ATTR_FILE_IOCOST_MODEL, QOS_USER, NULL, &st), -EBADMSG);
}

/* Read from Debian's 6.1.0-50-amd64, 6.12.117+deb13-amd64 and 7.3.4+deb13-amd64 by
 * tests/kernels/iocost (null_blk, cgroup v2): the same text on all three. */
TEST(real_printouts) {
        static const char *const qos[] = {
                "254:0 enable=1 ctrl=user rpct=95.00 rlat=5000 wpct=95.50 wlat=10000 min=50.00 max=150.00",
                "254:0 enable=1 ctrl=auto rpct=0.00 rlat=25000 wpct=0.00 wlat=25000 min=1.00 max=10000.00",
        };
        static const char *const model[] = {
                "254:0 ctrl=user model=linear rbps=2706339840 rseqiops=89698 rrandiops=110036 wbps=1063126016 "
                "wseqiops=135560 wrandiops=130734",
                "254:0 ctrl=auto model=linear rbps=488636629 rseqiops=8932 rrandiops=8518 wbps=427891549 "
                "wseqiops=28755 wrandiops=21940",
        };

        for (size_t i = 0; i < 2; i++) {
                _cleanup_(iocost_state_done) IocostState q = {}, m = {};

                assert_int_equal(iocost_parse_line(ATTR_FILE_IOCOST_QOS, qos[i], NULL, &q), 0);
                assert_int_equal(iocost_parse_line(ATTR_FILE_IOCOST_MODEL, model[i], NULL, &m), 0);
                /* what is kept prints as the kernel printed it */
                assert_string_equal(q.raw, qos[i] + strlen("254:0 "));
                assert_string_equal(m.raw, model[i] + strlen("254:0 "));
                assert_int_equal(q.num[ATTR_IOCOST_CTRL], i == 0);
                assert_int_equal(m.num[ATTR_IOCOST_MODEL_CTRL], i == 0);
        }
}

TEST(find) {
        _cleanup_(iocost_state_done) IocostState st = {};
        const char *text = "8:16 enable=0 ctrl=auto rpct=0.00 rlat=250000 wpct=0.00 wlat=250000 min=1.00 max=10000.00\n"
                           QOS_USER "\n" QOS_AUTO "\n";

        assert_int_equal(iocost_find(ATTR_FILE_IOCOST_QOS, text, "8:0", &st), 0);
        assert_int_equal(st.num[ATTR_IOCOST_RPCT], 9500);
        assert_int_equal(iocost_find(ATTR_FILE_IOCOST_QOS, text, "8:16", &st), 0);
        assert_int_equal(st.num[ATTR_IOCOST_RLAT], 250000);
        /* 8:1 is no prefix match of 8:16 */
        assert_int_equal(iocost_find(ATTR_FILE_IOCOST_QOS, text, "8:1", &st), -ENODATA);
        assert_int_equal(st.err, -ENODATA);
        assert_int_equal(iocost_find(ATTR_FILE_IOCOST_QOS, "", "8:0", &st), -ENODATA);
        assert_int_equal(iocost_find(ATTR_FILE_IOCOST_QOS, "8:0 enable=1\n", "8:0", &st), -EBADMSG);
}

TEST(mountinfo) {
        _cleanup_(strv_freep) char **m = NULL;
        const char *text =
                "22 28 0:21 / /proc rw,nosuid shared:12 - proc proc rw\n"
                "25 24 0:23 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
                "26 25 0:24 / /sys/fs/cgroup/blkio rw shared:5 - cgroup cgroup rw,blkio\n"
                "27 24 0:23 /system.slice /srv/bind rw shared:4 - cgroup2 cgroup2 rw\n"
                "28 24 0:30 / /run/my\\040cgroup rw master:3 shared:6 - cgroup2 none rw\n"
                "garbage\n"
                "29 24 0:31 / relative rw - cgroup2 cgroup2 rw\n";

        assert_int_equal(mountinfo_cgroup2_mounts(text, &m), 0);
        assert_int_equal(strv_length(m), 2);
        assert_string_equal(m[0], "/sys/fs/cgroup");
        assert_string_equal(m[1], "/run/my cgroup");
        assert_true(cgroup_controllers_have_io("cpuset cpu io memory pids\n"));
        assert_false(cgroup_controllers_have_io("cpuset cpu iop memory\n"));
        assert_false(cgroup_controllers_have_io(""));
}

/* The host facts are looked up once: a Sysfs sharing them reads none of them again. */
TEST(host_shared) {
        FakeKernel *k = fake_kernel_new();
        Sysfs *host = NULL, *s = NULL;
        char * const *hm, * const *sm;
        const char *release;

        assert_non_null(k);
        assert_int_equal(fake_cgroup2_add(k, "/sys/fs/cgroup", true, "6.18.0"), 0);
        assert_int_equal(sysfs_new(k->root, &host), 0);
        assert_int_equal(sysfs_probe_host(host), 0);
        assert_int_equal(sysfs_new_sharing(host, &s), 0);
        /* Changed after the probe: the sharing one still sees the host's. */
        assert_int_equal(fake_write(k, "proc/sys/kernel/osrelease", "7.0.0"), 0);
        assert_int_equal(fake_write(k, "proc/self/mountinfo", "garbage"), 0);
        release = sysfs_kernel_release(s);
        assert_ptr_equal(release, sysfs_kernel_release(host));
        assert_string_equal(release, "6.18.0");
        assert_int_equal(sysfs_iocost_probe(s), 0);
        assert_int_equal(sysfs_scheduler_modules(host, &hm), 0);
        assert_int_equal(sysfs_scheduler_modules(s, &sm), 0);
        assert_ptr_equal(hm, sm);
        sysfs_free(s);
        sysfs_free(host);
        fake_kernel_free(k);
}

TEST(static_key_kernels) {
        assert_true(kernel_has_rqos_static_key("6.16.0"));
        assert_true(kernel_has_rqos_static_key("6.16"));
        assert_true(kernel_has_rqos_static_key("6.16.3+deb14-amd64"));
        assert_true(kernel_has_rqos_static_key("6.16-rc4"));
        assert_true(kernel_has_rqos_static_key("6.16.1-arch1-1"));
        assert_false(kernel_has_rqos_static_key("6.16.4"));
        assert_false(kernel_has_rqos_static_key("6.16.10"));
        assert_false(kernel_has_rqos_static_key("6.17.0"));
        assert_false(kernel_has_rqos_static_key("6.1.0-28-amd64"));
        assert_false(kernel_has_rqos_static_key("6.12.57+deb13-amd64"));
        assert_false(kernel_has_rqos_static_key("7.3.4+deb13-amd64"));
        assert_false(kernel_has_rqos_static_key("6.160.1"));
        assert_false(kernel_has_rqos_static_key("5.16.2"));
        assert_false(kernel_has_rqos_static_key(""));
        assert_false(kernel_has_rqos_static_key(NULL));
}

/* A disk's udev properties from systemd's hwdb: "naive" (systemd's default) listed after two
 * others, the first without a model; a picker that takes the first listed, or the first
 * complete one, shows. */
static char *hwdb_props[] = {
        "ID_MODEL=Samsung SSD 970",
        "IOCOST_SOLUTIONS=isolation isolated-bandwidth naive bandwidth",
        "IOCOST_QOS_NAIVE=rpct=99.00 rlat=8000 wpct=99.00 wlat=8000 min=75.00 max=100.00",
        "IOCOST_MODEL_NAIVE=rbps=1 rseqiops=2 rrandiops=3 wbps=4 wseqiops=5 wrandiops=6",
        "IOCOST_QOS_ISOLATED_BANDWIDTH=rpct=95.00 rlat=5000 wpct=95.00 wlat=5000 min=50.00 max=150.00",
        "IOCOST_MODEL_ISOLATED_BANDWIDTH=rbps=7 rseqiops=8 rrandiops=9 wbps=10 wseqiops=11 wrandiops=12",
        "IOCOST_QOS_ISOLATION=rpct=50.00 rlat=1000 wpct=50.00 wlat=1000 min=1.00 max=100.00",
        NULL,
};

TEST(solution_pick) {
        _cleanup_(udev_props_freep) UdevProps *props = fixture_props(hwdb_props), *no_naive = NULL,
                                              *empty = NULL;
        char *no_naive_l[] = {
                "IOCOST_SOLUTIONS=  bandwidth\tisolation ",
                "IOCOST_QOS_BANDWIDTH=rlat=1",
                "IOCOST_MODEL_BANDWIDTH=rbps=1",
                NULL,
        };
        char *empty_l[] = { "IOCOST_SOLUTIONS= ", NULL };
        const char *qos, *model;
        char *name;

        no_naive = fixture_props(no_naive_l);
        empty = fixture_props(empty_l);

        /* systemd's choice: its default TargetSolution "naive" when listed */
        assert_int_equal(iocost_solution_pick(props, "hwdb", &name, &qos, &model), 0);
        assert_string_equal(name, "naive");
        assert_string_equal(model, "rbps=1 rseqiops=2 rrandiops=3 wbps=4 wseqiops=5 wrandiops=6");
        free(name);
        /* else the first one listed */
        assert_int_equal(iocost_solution_pick(no_naive, "hwdb", &name, &qos, &model), 0);
        assert_string_equal(name, "bandwidth");
        assert_string_equal(qos, "rlat=1");
        free(name);
        /* a name: upper case, '-' as '_' */
        assert_int_equal(iocost_solution_pick(props, "isolated-bandwidth", &name, &qos, &model), 0);
        assert_string_equal(qos, "rpct=95.00 rlat=5000 wpct=95.00 wlat=5000 min=50.00 max=150.00");
        free(name);
        /* no model for "isolation", nothing for "bandwidth" */
        assert_int_equal(iocost_solution_pick(props, "isolation", &name, &qos, &model), -ENXIO);
        assert_int_equal(iocost_solution_pick(props, "bandwidth", &name, &qos, &model), -ENXIO);
        assert_int_equal(iocost_solution_pick(empty, "hwdb", &name, &qos, &model), -ENOENT);
        assert_int_equal(iocost_solution_pick(NULL, "hwdb", &name, &qos, &model), -ENOENT);
}

/* ---- planner: a disk in memory, a policy from text ---- */

static Disk *disk_with(const char *qos, const char *model, const char *release) {
        Disk *d = disk_new("nvme0n1");

        assert_non_null(d);
        d->devnum = strdup("259:0");
        d->has_scheduler_file = true;
        d->rqos_static_key = kernel_has_rqos_static_key(release);
        if (qos)
                assert_int_equal(iocost_find(ATTR_FILE_IOCOST_QOS, qos, "259:0", &DISK_IOCOST(d, ATTR_FILE_IOCOST_QOS)), 0);
        else
                DISK_IOCOST(d, ATTR_FILE_IOCOST_QOS).err = -ENODATA;
        if (model)
                assert_int_equal(iocost_find(ATTR_FILE_IOCOST_MODEL, model, "259:0", &DISK_IOCOST(d, ATTR_FILE_IOCOST_MODEL)), 0);
        else
                DISK_IOCOST(d, ATTR_FILE_IOCOST_MODEL).err = -ENODATA;
        return d;
}

/* The plan of some settings for a disk, and the io.cost lines it writes (NULL for none). */
typedef struct Planned {
        FixturePlan fp;
        char *qos, *model;
} Planned;

static void planned_done(Planned *x) {
        fixture_plan_done(&x->fp);
        free(x->qos);
        free(x->model);
}

static void plan_with(Planned *x, const Disk *d, const char *settings) {
        const Plan *p;

        *x = (Planned) {};
        fixture_plan(&x->fp, "t.conf", d, settings);
        p = x->fp.plan;
        assert_int_equal(iocost_write_line(d->devnum, p->actions, p->n_actions, ATTR_FILE_IOCOST_QOS, &x->qos), 0);
        assert_int_equal(iocost_write_line(d->devnum, p->actions, p->n_actions, ATTR_FILE_IOCOST_MODEL, &x->model), 0);
}

/* The qos and model lines that SETTINGS plan for D: "" for no line, NULL for not checked. */
static void expect_lines(const Disk *d, const char *settings, const char *qos, const char *model) {
        Planned x;

        plan_with(&x, d, settings);
        if (qos && *qos)
                assert_string_equal(x.qos, qos);
        else if (qos)
                assert_null(x.qos);
        if (model && *model)
                assert_string_equal(x.model, model);
        else if (model)
                assert_null(x.model);
        planned_done(&x);
}

static const Action *action(const Planned *x, const char *key) {
        return fixture_action(x->fp.plan, key);
}

#define USER_QOS_SETTINGS \
        "iocost.enable = yes\niocost.rpct = 95\niocost.rlat = 5000\niocost.wpct = 95.5\n" \
        "iocost.wlat = 10000\niocost.min = 50\niocost.max = 150\n"

TEST(plan_user) {
        _cleanup_(disk_freep) Disk *d = disk_with(
                "259:0 enable=1 ctrl=user rpct=95.00 rlat=5000 wpct=95.50 wlat=10000 min=50.00 max=150.00",
                MODEL_AUTO, "7.3.4+deb13-amd64");
        Planned x;

        /* everything as the kernel shows it: nothing to write */
        plan_with(&x, d, USER_QOS_SETTINGS);
        assert_null(x.qos);
        assert_null(x.model);
        assert_int_equal(action(&x, "iocost.rpct")->type, ACTION_SKIP);
        planned_done(&x);

        /* rounding: 95.504 is 95.50 to the kernel; 49.996 is 50.00 */
        expect_lines(d, "iocost.wpct = 95.504\niocost.min = 49.996\n", "", NULL);

        /* one key differs: one line with that key only */
        plan_with(&x, d, USER_QOS_SETTINGS "iocost.model.ctrl = auto\n");
        assert_null(x.qos);
        assert_null(x.model);
        planned_done(&x);
        plan_with(&x, d, "iocost.enable = yes\niocost.rlat = 6000\niocost.wpct = 95.5\n");
        assert_string_equal(x.qos, "259:0 rlat=6000");
        assert_string_equal(action(&x, "iocost.rlat")->current, "5000");
        planned_done(&x);

        /* min above the current max: the kernel would refuse the line */
        plan_with(&x, d, "iocost.min = 200\n");
        assert_int_equal(action(&x, "iocost.min")->type, ACTION_REFUSED);
        assert_non_null(strstr(action(&x, "iocost.min")->reason, "min 200.00 would be above max 150.00"));
        assert_null(x.qos);
        planned_done(&x);
        expect_lines(d, "iocost.min = 200\niocost.max = 300\n",
                     "259:0 min=200.00 max=300.00", NULL);

        /* the model: auto now, numbers wanted: written with the keys that differ (all) */
        expect_lines(d, "iocost.model.rbps = 3102524156\niocost.model.wbps = 1000\n",
                     NULL, "259:0 rbps=3102524156 wbps=1000");
        expect_lines(d, "iocost.model.ctrl = user\n", NULL, "259:0 ctrl=user");
}

TEST(plan_auto) {
        _cleanup_(disk_freep) Disk *d = disk_with(QOS_AUTO, MODEL_AUTO, "6.12.57+deb13-amd64");
        Planned x;

        /* ctrl=auto: only enable and ctrl are compared */
        expect_lines(d, "iocost.enable = yes\niocost.ctrl = auto\niocost.model.ctrl = auto\n",
                     "", "");
        plan_with(&x, d, "iocost.enable = yes\niocost.ctrl = auto\niocost.rlat = 9\n");
        assert_null(x.qos);
        assert_int_equal(action(&x, "iocost.rlat")->type, ACTION_REFUSED);
        assert_non_null(strstr(action(&x, "iocost.rlat")->reason, "iocost.ctrl = auto (t.conf:4)"));
        planned_done(&x);
        expect_lines(d, "iocost.enable = no\n", "259:0 enable=0", NULL);
        /* user numbers equal to the kernel's auto ones: written, so that they stay */
        expect_lines(d, "iocost.ctrl = user\niocost.rlat = 5000\n",
                     "259:0 ctrl=user rlat=5000", NULL);
}

TEST(plan_absent) {
        _cleanup_(disk_freep) Disk *d = disk_with(NULL, NULL, "6.1.0-28-amd64"), *sk = NULL, *sk_set_up = NULL;
        Planned x;

        /* no line: iocost never set up on the disk; off and auto already */
        plan_with(&x, d, "iocost.enable = no\niocost.ctrl = auto\niocost.model.ctrl = auto\n");
        assert_null(x.qos);
        assert_null(x.model);
        assert_string_equal(action(&x, "iocost.enable")->current, "not set up");
        planned_done(&x);
        plan_with(&x, d, USER_QOS_SETTINGS "iocost.model.rbps = 100\n");
        assert_string_equal(x.qos, "259:0 enable=1 rpct=95.00 rlat=5000 wpct=95.50 wlat=10000 min=50.00 max=150.00");
        assert_string_equal(x.model, "259:0 rbps=100");
        planned_done(&x);
        /* min above the kernel's default max of a new ioc (10000%) cannot be */
        expect_lines(d, "iocost.min = 10000\n", "259:0 min=10000.00", NULL);

        /* 6.16.0-6.16.3: the first set-up is refused unless opted in */
        sk = disk_with(NULL, NULL, "6.16.2+deb14-amd64");
        plan_with(&x, sk, USER_QOS_SETTINGS);
        assert_null(x.qos);
        assert_int_equal(action(&x, "iocost.enable")->type, ACTION_REFUSED);
        assert_non_null(strstr(action(&x, "iocost.enable")->reason, "replace static key with atomic bitop"));
        assert_non_null(strstr(action(&x, "iocost.enable")->reason, "iocost.allow_static_key_kernels = yes"));
        planned_done(&x);
        expect_lines(sk, "iocost.enable = yes\niocost.allow_static_key_kernels = yes\n",
                     "259:0 enable=1", NULL);
        /* already set up (by someone else): no new rq-qos policy, nothing refused */
        sk_set_up = disk_with(QOS_AUTO, MODEL_AUTO, "6.16.2+deb14-amd64");
        expect_lines(sk_set_up, "iocost.enable = no\n", "259:0 enable=0", NULL);
}

TEST(plan_not_applicable) {
        _cleanup_(disk_freep) Disk *d = disk_with(NULL, NULL, NULL);
        Planned x;

        DISK_IOCOST(d, ATTR_FILE_IOCOST_QOS).err = -ENOENT;
        DISK_IOCOST(d, ATTR_FILE_IOCOST_MODEL).err = -ENOENT;
        plan_with(&x, d, "iocost.enable = yes\niocost.model.rbps = 5\n");
        assert_int_equal(action(&x, "iocost.enable")->type, ACTION_UNSUPPORTED);
        assert_non_null(strstr(action(&x, "iocost.enable")->reason, "not applicable"));
        assert_int_equal(action(&x, "iocost.model.rbps")->type, ACTION_UNSUPPORTED);
        assert_null(x.qos);
        planned_done(&x);

        /* bio-based: the kernel says EOPNOTSUPP */
        DISK_IOCOST(d, ATTR_FILE_IOCOST_QOS).err = -ENODATA;
        d->has_scheduler_file = false;
        plan_with(&x, d, "iocost.enable = yes\n");
        assert_int_equal(action(&x, "iocost.enable")->type, ACTION_UNSUPPORTED);
        planned_done(&x);
}

TEST(plan_solution) {
        _cleanup_(disk_freep) Disk *d = disk_with(NULL, NULL, "7.3.4");
        const Action *a;
        Planned x;

        d->udev = fixture_props((char *[]) {
                "IOCOST_SOLUTIONS=naive",
                "IOCOST_QOS_NAIVE=rpct=99.00 rlat=8000 wpct=99.00 wlat=8000 min=75.00 max=100.00",
                "IOCOST_MODEL_NAIVE=rbps=1 rseqiops=2 rrandiops=3 wbps=4 wseqiops=5 wrandiops=6",
                NULL });
        /* the hwdb's values, explicit keys override them */
        plan_with(&x, d, "iocost.solution = hwdb\niocost.wlat = 9000\n");
        assert_string_equal(x.qos, "259:0 enable=1 ctrl=user rpct=99.00 rlat=8000 wpct=99.00 wlat=9000 min=75.00 max=100.00");
        assert_string_equal(x.model, "259:0 ctrl=user rbps=1 rseqiops=2 rrandiops=3 wbps=4 wseqiops=5 wrandiops=6");
        a = action(&x, "iocost.rlat");
        assert_string_equal(a->file, "udev hwdb IOCOST_QOS_naive, via t.conf");
        assert_int_equal(a->line, 3);
        a = action(&x, "iocost.model.rbps");
        assert_string_equal(a->file, "udev hwdb IOCOST_MODEL_naive, via t.conf");
        a = action(&x, "iocost.wlat");
        assert_string_equal(a->file, "t.conf");
        assert_int_equal(a->line, 4);
        assert_int_equal(action(&x, "iocost.solution")->type, ACTION_SKIP);
        planned_done(&x);

        /* no such solution: said on the solution key, nothing else planned from it */
        plan_with(&x, d, "iocost.solution = bandwidth\n");
        assert_int_equal(action(&x, "iocost.solution")->type, ACTION_UNSUPPORTED);
        assert_int_equal(x.fp.plan->n_actions, 1);
        planned_done(&x);

        /* a hwdb value iosched would refuse in a file: none of the solution is taken */
        assert_int_equal(udev_props_add(d->udev, "IOCOST_QOS_NAIVE", "rpct=101 rlat=8000"), 1);
        plan_with(&x, d, "iocost.solution = naive\n");
        assert_int_equal(action(&x, "iocost.solution")->type, ACTION_UNSUPPORTED);
        assert_int_equal(x.fp.plan->n_actions, 1);
        planned_done(&x);
}

/* ---- apply on a fake tree ---- */

static const FakeDiskSpec nvme = {
        .name = "nvme0n1", .devnum = "259:0", .scheduler = "none", .schedulers = "none mq-deadline",
        .queues = 4,
};

static void setup(Fixture *c, bool io, const char *release, const char *settings) {
        fixture_setup(c, &nvme, "apply.conf", "nvme*", settings);
        assert_int_equal(fake_cgroup2_add(c->k, "/sys/fs/cgroup", io, release), 0);
}

static Plan *run(Fixture *c, char * const *props, ReportSummary *st) {
        DiskLoad load;

        policy_disk_load(c->p, &load);
        return fixture_apply(c, "nvme0n1", props, &load, 0, st);
}

#define MODEL_SETTINGS \
        "iocost.model.rbps = 2706339840\niocost.model.rseqiops = 89698\niocost.model.rrandiops = 110036\n" \
        "iocost.model.wbps = 1063126016\niocost.model.wseqiops = 135560\niocost.model.wrandiops = 130734\n"

TEST(apply_converges) {
        ReportSummary st = {};
        Plan *p;
        Fixture c;
        char *v;

        setup(&c, true, "7.3.4+deb13-amd64", USER_QOS_SETTINGS MODEL_SETTINGS "wbt_lat_usec = 3000\n");

        /* from nothing: model, then qos, then wbt (which the qos write turned off) */
        p = run(&c, NULL, &st);
        assert_string_equal(c.k->log,
                            "nvme0n1:io.cost.model=259:0 rbps=2706339840 rseqiops=89698 rrandiops=110036 "
                            "wbps=1063126016 wseqiops=135560 wrandiops=130734\n"
                            "nvme0n1:io.cost.qos=259:0 enable=1 rpct=95.00 rlat=5000 wpct=95.50 wlat=10000 "
                            "min=50.00 max=150.00\n"
                            "nvme0n1:queue/wbt_lat_usec=3000\n");
        assert_int_equal(c.k->iocost_writes, 2);
        assert_int_equal(fixture_action(p, "iocost.rlat")->outcome, OUTCOME_WRITTEN);
        assert_int_equal(fixture_action(p, "iocost.model.wbps")->outcome, OUTCOME_WRITTEN);
        assert_int_equal(fixture_action(p, "wbt_lat_usec")->outcome, OUTCOME_WRITTEN);
        assert_int_equal(st.failed, 0);
        plan_free(p);
        v = fake_read(c.k, "sys/fs/cgroup/io.cost.qos");
        assert_string_equal(v, "259:0 enable=1 ctrl=user rpct=95.00 rlat=5000 wpct=95.50 wlat=10000 min=50.00 max=150.00");
        free(v);

        /* again: not one write */
        fake_kernel_forget_writes(c.k);
        p = run(&c, NULL, NULL);
        assert_int_equal(c.k->n_writes, 0);
        assert_int_equal(fixture_action(p, "iocost.enable")->outcome, OUTCOME_SKIPPED);
        plan_free(p);

        /* someone changes one number: one line with that one */
        assert_int_equal(fake_iocost_set(c.k, "io.cost.qos",
                                         "259:0 enable=1 ctrl=user rpct=95.00 rlat=7000 wpct=95.50 wlat=10000 min=50.00 max=150.00"), 0);
        p = run(&c, NULL, NULL);
        assert_string_equal(c.k->log, "nvme0n1:io.cost.qos=259:0 rlat=5000\n");
        assert_int_equal(fixture_action(p, "iocost.rlat")->outcome, OUTCOME_WRITTEN);
        assert_string_equal(fixture_action(p, "iocost.rlat")->result, "5000");
        plan_free(p);
        fixture_teardown(&c);
}

TEST(apply_errors) {
        ReportSummary st = {};
        Plan *p;
        Fixture c;

        setup(&c, true, "7.3.4", "iocost.enable = yes\niocost.rlat = 5000\nnr_requests = 64\n");
        /* EBUSY is retried; the line is written once it goes through */
        c.k->busy = 2;
        p = run(&c, NULL, &st);
        assert_int_equal(c.k->iocost_writes, 1);
        assert_int_equal(fixture_action(p, "iocost.rlat")->outcome, OUTCOME_WRITTEN);
        plan_free(p);

        /* a refused line fails every key in it */
        assert_int_equal(fake_iocost_set(c.k, "io.cost.qos",
                                         "259:0 enable=0 ctrl=user rpct=0.00 rlat=6000 wpct=0.00 wlat=25000 min=1.00 max=10000.00"), 0);
        c.k->fail_next = -EINVAL;
        st = (ReportSummary) {};
        p = run(&c, NULL, &st);
        assert_int_equal(fixture_action(p, "iocost.enable")->outcome, OUTCOME_FAILED);
        assert_int_equal(fixture_action(p, "iocost.rlat")->outcome, OUTCOME_FAILED);
        assert_int_equal(fixture_action(p, "iocost.rlat")->error, -EINVAL);
        assert_non_null(strstr(fixture_action(p, "iocost.rlat")->reason, "writing \"259:0 enable=1 rlat=5000\" failed"));
        assert_int_equal(fixture_action(p, "nr_requests")->outcome, OUTCOME_SKIPPED);
        assert_int_equal(st.failed, 2);
        plan_free(p);

        /* the disk goes away during the write: the rest of it is gone, quietly */
        assert_int_equal(fake_iocost_set(c.k, "io.cost.qos",
                                         "259:0 enable=0 ctrl=user rpct=0.00 rlat=6000 wpct=0.00 wlat=25000 min=1.00 max=10000.00"), 0);
        c.k->vanish_after = 1;
        st = (ReportSummary) {};
        p = run(&c, NULL, &st);
        assert_int_equal(fixture_action(p, "iocost.rlat")->outcome, OUTCOME_GONE);
        assert_int_equal(fixture_action(p, "nr_requests")->outcome, OUTCOME_SKIPPED);
        assert_int_equal(st.failed, 0);
        assert_int_equal(st.gone, 2);
        plan_free(p);
        fake_disk_add(c.k, &nvme);

        /* the disk's own line only: another disk's number is refused before any write */
        assert_int_equal(sysfs_write_setting(c.s, "nvme0n1", attr_get(ATTR_IOCOST_RLAT), NULL, "8:0 rlat=1"), -EINVAL);
        assert_int_equal(sysfs_write_setting(c.s, "nvme0n1", attr_get(ATTR_IOCOST_RLAT), NULL, "259:0 rlat=1\n8:0 rlat=1"), -EINVAL);
        assert_int_equal(sysfs_write_setting(c.s, "nvme0n1", attr_get(ATTR_IOCOST_SOLUTION), NULL, "259:0 rlat=1"), -EINVAL);
        fixture_teardown(&c);
}

TEST(apply_not_applicable) {
        ReportSummary st = {};
        Plan *p;
        Fixture c;

        /* the io controller is bound to v1 (this machine): nothing to read or write */
        setup(&c, false, NULL, "iocost.enable = yes\nnr_requests = 64\n");
        assert_int_equal(sysfs_iocost_probe(c.s), -ENOENT);
        p = run(&c, NULL, &st);
        assert_int_equal(fixture_action(p, "iocost.enable")->outcome, OUTCOME_UNSUPPORTED);
        assert_string_equal(c.k->log, "nvme0n1:queue/nr_requests=64\n");
        plan_free(p);
        fixture_teardown(&c);
}

TEST(apply_static_key) {
        Plan *p;
        Fixture c;

        setup(&c, true, "6.16.3", "iocost.enable = yes\n");
        assert_string_equal(sysfs_kernel_release(c.s), "6.16.3");
        p = run(&c, NULL, NULL);
        assert_int_equal(fixture_action(p, "iocost.enable")->outcome, OUTCOME_REFUSED);
        assert_int_equal(c.k->n_writes, 0);
        plan_free(p);
        fixture_teardown(&c);
}

TEST(apply_hwdb) {
        char **props = hwdb_props;
        Plan *p;
        Fixture c;

        setup(&c, true, "6.12.57+deb13-amd64", "iocost.solution = hwdb\niocost.max = 120\n");
        p = run(&c, props, NULL);
        assert_string_equal(c.k->log,
                            "nvme0n1:io.cost.model=259:0 ctrl=user rbps=1 rseqiops=2 rrandiops=3 wbps=4 "
                            "wseqiops=5 wrandiops=6\n"
                            "nvme0n1:io.cost.qos=259:0 enable=1 ctrl=user rpct=99.00 rlat=8000 wpct=99.00 "
                            "wlat=8000 min=75.00 max=120.00\n");
        assert_string_equal(fixture_action(p, "iocost.rlat")->file, "udev hwdb IOCOST_QOS_naive, via apply.conf");
        plan_free(p);
        fake_kernel_forget_writes(c.k);
        p = run(&c, props, NULL);
        assert_int_equal(c.k->n_writes, 0);
        plan_free(p);
        fixture_teardown(&c);
}

/* systemd's 90-iocost.rules in effect: a second writer (writers_scan() of the fake root) for
 * disks with IOCOST_SOLUTIONS, found in the pipeline. */
static bool two_writers(Fixture *c, char * const *props, bool *ret_note) {
        _cleanup_(udev_props_freep) UdevProps *u = fixture_props(props);
        _cleanup_(writers_freep) Writers *w = NULL;
        _cleanup_(disk_run_freep) DiskRun *run = NULL;
        _cleanup_(freep) char *out = NULL;
        size_t size = 0;
        DiskLoad load;
        FILE *f;

        assert_int_equal(writers_scan(c->k->root, &w), 0);
        policy_disk_load(c->p, &load);
        assert_int_equal(disk_run(c->s, c->p, w, "nvme0n1", u, &load, DISK_RUN_DRY_RUN, &run), 0);
        f = open_memstream(&out, &size);
        assert_non_null(f);
        report_print_text(f, run->disk, run->plan, false);
        fclose(f);
        *ret_note = strstr(out, "(two writers)");
        return other_writers_find(run->disk->writers, ATTR_IOCOST_RLAT, NULL,
                                  WRITER_KIND_BIT(WRITER_SYSTEMD_IOCOST));
}

TEST(two_writers) {
        char *props[] = { "IOCOST_SOLUTIONS=naive", "IOCOST_QOS_NAIVE=rlat=1", "IOCOST_MODEL_NAIVE=rbps=1", NULL };
        char *none[] = { "ID_MODEL=x", NULL };
        char path[PATH_MAX];
        bool note;
        Fixture c;

        setup(&c, true, "7.3.4", "iocost.enable = yes\n");
        assert_false(two_writers(&c, props, &note));
        assert_int_equal(fake_write(c.k, "usr/lib/udev/rules.d/90-iocost.rules",
                                    "ENV{IOCOST_SOLUTIONS}!=\"\", RUN+=\"iocost apply $env{DEVNAME}\""), 0);
        /* the rule without systemd's helper writes nothing */
        assert_false(two_writers(&c, props, &note));
        assert_int_equal(fake_write(c.k, "usr/lib/udev/iocost", "#!/bin/sh"), 0);
        snprintf(path, sizeof(path), "%s/usr/lib/udev/iocost", c.k->root);
        assert_int_equal(chmod(path, 0755), 0);
        assert_true(two_writers(&c, props, &note));
        assert_true(note);
        /* no hwdb solution for the disk: the rule does not run for it */
        assert_false(two_writers(&c, none, &note));
        assert_false(note);
        /* masked in /etc */
        assert_int_equal(fake_write(c.k, "etc/udev/rules.d/other.rules", ""), 0);
        snprintf(path, sizeof(path), "%s/etc/udev/rules.d/90-iocost.rules", c.k->root);
        assert_int_equal(symlink("/dev/null", path), 0);
        assert_false(two_writers(&c, props, &note));
        fixture_teardown(&c);
}

DEFINE_TEST_MAIN(NULL, NULL)
