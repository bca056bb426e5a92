#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Hostile D-Bus input for ioschedd (docs/reliability.md): tests/integration/hostile-bus.py
# sends bad names, wrong signatures, unknown keys, bad values, strings no library would send,
# a burst of 10,000 pipelined calls and clients that hang up mid-call, as root (past polkit);
# then an unprivileged burst; and a disk whose udev model and serial are not UTF-8. Each case gets the named error or the right answer, ioschedd
# stays up, and, traced with strace the whole time, it opens nothing for writing (nor renames,
# unlinks, creates) outside the queues of the test's disks and the drop-in directories of its
# configuration root.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/daemon.sh"
require_root
command -v strace >/dev/null || fail "strace is not installed (tools/install-deps test)"
/usr/bin/python3 -c 'import dbus' 2>/dev/null || fail "python3-dbus is not installed (tools/install-deps test)"

a=$(loop_new)
b=$(loop_new)   # no rule matches it
c=$(loop_new)   # its udev model and serial are not UTF-8, as a device may report them
udevd_ensure
rule="/run/udev/rules.d/99-iosched-test-$$-hostile.rules"
printf 'ACTION=="add|change", KERNEL=="%s", ENV{ID_MODEL}="bad\xff\xfemodel", ENV{ID_SERIAL_SHORT}="ser\xc3(ial"\n' \
        "$c" >"$rule"
on_exit "rm -f $rule; udevadm control --reload"
udevadm control --reload
udevadm trigger --action=change --settle "/sys/class/block/$c"
udevadm info "/sys/class/block/$c" | grep -aq $'ID_MODEL=bad\xff' || fail "udev did not take the test rule"
config_root hostile "match.name = $a" \
        "scheduler = mq-deadline" "nr_requests = 32" "read_ahead_kb = 64"
b_before=$(queue_snapshot "$b")

bus_start
ioschedd_start --config-root "$root"
# One trace file per thread (-ff): no line is split by another thread's.
trace="$TEST_TMP/trace"
strace_attach "$trace" "$IOSCHEDD_PID" -ff -qq -y -e trace=%file,truncate,ftruncate -e signal=none
strace_pid=$STRACE_PID
rss_before=$(awk '/^VmRSS/ {print $2}' "/proc/$IOSCHEDD_PID/status")

/usr/bin/python3 "$(dirname "$0")/hostile-bus.py" "$a" "$b" || fail "hostile-bus.py: a case got a wrong answer"
ioschedd_alive || fail "ioschedd died"

# A device's identity that is not UTF-8 is treated as absent: its object still answers, and
# so does the object manager for every disk (before, GetAll and GetManagedObjects failed with
# EINVAL).
disk_prop "$c" Model | has -xF 's ""' || fail "Model of $c: $(disk_prop "$c" Model)"
disk_prop "$c" Serial | has -xF 's ""' || fail "Serial of $c: $(disk_prop "$c" Serial)"
busctl call org.iosched1 "$(disk_path "$c")" org.freedesktop.DBus.Properties GetAll s org.iosched1.Disk \
        >/dev/null || fail "GetAll of $c failed"
busctl call org.iosched1 /org/iosched1 org.freedesktop.DBus.ObjectManager GetManagedObjects \
        | has "$(disk_path "$c")" || fail "GetManagedObjects failed"
log "a model and serial that are not UTF-8 are treated as absent; GetAll and GetManagedObjects answer"

# The unprivileged angle: 2,000 mutating calls from nobody, pipelined, all denied; reads work.
rc=0
as_unpriv /usr/bin/python3 - "$a" <<'PY' || rc=$?
import dbus, sys
bus = dbus.SystemBus()
disk = sys.argv[1]
mgr = dbus.Interface(bus.get_object("org.iosched1", "/org/iosched1"), "org.iosched1.Manager")
denied = ("org.freedesktop.DBus.Error.AccessDenied",
          "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired")
bad = 0
for i in range(2000):
    try:
        if i % 4 == 0:
            mgr.Apply(disk)
        elif i % 4 == 1:
            mgr.SetPolicy(disk, {"nr_requests": dbus.String("16", variant_level=1)}, i % 8 == 1)
        elif i % 4 == 2:
            mgr.ResetPolicy(disk, False)
        else:
            mgr.Reload()
        bad += 1
    except dbus.exceptions.DBusException as e:
        if e.get_dbus_name() not in denied:
            bad += 1
            print("unprivileged call %d: %s" % (i, e.get_dbus_name()))
if mgr.GetDisk(disk) != "/org/iosched1/disk/" + disk:
    bad += 1
print("unprivileged: 2000 mutating calls, %d not denied" % bad)
sys.exit(1 if bad else 0)
PY
[ $rc = 0 ] || fail "an unprivileged mutating call was not denied"
ioschedd_alive || fail "ioschedd died"
rss_after=$(awk '/^VmRSS/ {print $2}' "/proc/$IOSCHEDD_PID/status")

kill "$strace_pid"
wait "$strace_pid" 2>/dev/null || true

# Nothing modified outside the test disks' queues and the configuration root's drop-in
# directories (and their parents, made with mkdir -p); failed attempts (= -1) change nothing.
# strace -y shows the directory of a dirfd: "openat(37</ROOT/run/iosched.d>, ".#99-...")".
dropins="$root/(etc|run)(/iosched\\.d(/[^\"]*)?)?"
allowed="$(queue_open_re "$a" "$b")|\"$dropins\"|[0-9]+<$root/(etc|run)/iosched\\.d>, \""
modifying='^(open|openat|openat2)\(.*O_(WRONLY|RDWR|CREAT|TRUNC)|^(creat|mkdir|mkdirat|rename|renameat|renameat2|unlink|unlinkat|rmdir|link|linkat|symlink|symlinkat|chmod|fchmodat|chown|fchownat|lchown|truncate|mknod|mknodat|utimensat|utimes|setxattr|lsetxattr|removexattr)\('
cat "$trace".* >"$TEST_TMP/trace.all"
bad=$(grep -E "$modifying" "$TEST_TMP/trace.all" | grep -v ' = -1 ' | grep -vE "$allowed" || true)
[ -z "$bad" ] || fail "ioschedd modified something outside the queues and its drop-in directories: $bad"
n_writes=$(grep -cE '^open(at)?\(.*O_WRONLY' "$TEST_TMP/trace.all" || true)
n_mod=$(grep -cE "$modifying" "$TEST_TMP/trace.all" || true)
[ "$(queue_snapshot "$b")" = "$b_before" ] || fail "$b has no rule but was changed"
log "strace: $(wc -l <"$TEST_TMP/trace.all") file syscalls traced in $(ls "$trace".* | wc -l) threads, $n_mod modifying ($n_writes write-mode opens), all inside the allowed paths"
log "RSS: ${rss_before} kB before, ${rss_after} kB after"
log "ok"
