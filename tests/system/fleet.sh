# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/system/fleet.sh: the fleet checks (deploy/, docs/fleet.md) on the booted guest of
# tests/system, after the checks of checks.sh (so after apt_purge: iosched is not installed).
# Sourced by tests/system/run; checks_run runs every check_fleet_* below, in file order.
#
# - The Ansible role, by Debian's ansible-playbook on this machine over ssh into the guest
#   (QEMU's user network, 127.0.0.1:$guest_ssh_port): it installs the .deb under test and
#   brings the disks to the policy; a second run reports changed=0 and the kernel counts no
#   write to a queue attribute; --check --diff shows the disk and key a new policy would
#   change and writes nothing; a bad policy fails the play with file:line and changes nothing.
# - The container image (deploy/kubernetes/image/build, from the same .deb) run by podman in
#   the guest with the DaemonSet's mounts and privileges: it brings a disk to the policy, a
#   second start writes nothing, a ConfigMap-style change of its drop-in is applied by Reload
#   with exactly one write, a bad one is refused with its file:line (not ready, no write).
# IOSCHED_TEST_FLEET=0 skips them (they need ansible-core and podman: tools/install-deps fleet).

fleet_dir() {
	mkdir -p "$tmp/fleet"
	echo "$tmp/fleet"
}

fleet_skip() {
	if [ "${IOSCHED_TEST_FLEET:-1}" = 0 ]; then
		skip "IOSCHED_TEST_FLEET=0"
		return 0
	fi
	return 1
}

# fleet_ssh_setup: the run's key in root's authorized_keys, sshd answering; sets fleet_ssh.
fleet_ssh_setup() {
	local d i
	d=$(fleet_dir)
	fleet_ssh=(ssh -i "$d/key" -p "$guest_ssh_port" -o BatchMode=yes -o StrictHostKeyChecking=no
		-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ConnectTimeout=20 root@127.0.0.1)
	[ -f "$d/key" ] || ssh-keygen -q -t ed25519 -N '' -C iosched-system-test -f "$d/key"
	guest 'install -d -m 0700 /root/.ssh' >/dev/null || return 1
	guest_put "$d/key.pub" /root/.ssh/authorized_keys >/dev/null || return 1
	guest 'systemctl start ssh.service && systemctl is-active ssh.service' >/dev/null || return 1
	for i in $(seq 60); do
		"${fleet_ssh[@]}" true 2>/dev/null && return 0
		sleep 1
	done
	echo "  no ssh to the guest on 127.0.0.1:$guest_ssh_port"
	return 1
}

# fleet_play VARS [ARGS...]: the role's playbook (deploy/ansible/site.yml) on the guest with the
# variables of the YAML file VARS; its output in $tmp/fleet/play.out, its status returned.
fleet_play() {
	local d vars=$1
	shift
	d=$(fleet_dir)
	cat >"$d/inventory" <<-EOF
	[iosched]
	guest ansible_host=127.0.0.1 ansible_port=$guest_ssh_port ansible_user=root ansible_python_interpreter=/usr/bin/python3
	EOF
	ANSIBLE_PIPELINING=1 ANSIBLE_HOST_KEY_CHECKING=0 ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0 \
		ANSIBLE_PRIVATE_KEY_FILE="$d/key" ANSIBLE_SSH_ARGS="-o UserKnownHostsFile=/dev/null -o ControlMaster=auto -o ControlPersist=60s" \
		ANSIBLE_LOCAL_TEMP="$d/ansible-local" ANSIBLE_HOME="$d/ansible-home" \
		ansible-playbook -i "$d/inventory" -e "@$vars" "$@" "$src_dir/deploy/ansible/site.yml" >"$d/play.out" 2>&1
}

# fleet_node_cpu: CPU time (ms) used so far by user.slice, where sshd puts the plays' sessions:
# what Ansible's modules cost the node.
fleet_node_cpu() {
	guest 'echo $(( $(sed -n "s/^usage_usec //p" /sys/fs/cgroup/user.slice/cpu.stat) / 1000 ))'
}

# fleet_recap FIELD: a number of the play's recap line (ok, changed, failed, ...).
fleet_recap() {
	sed -n "s/^guest *:.* $1=\([0-9]*\).*/\1/p" "$tmp/fleet/play.out" | tail -n1
}

# fleet_trace_on / fleet_trace_off: count every write to a queue attribute (queue_attr_store,
# elv_attr_store) and to iocost's files (ioc_qos_write, ioc_cost_model_write), whoever writes,
# with the kernel's function tracer; fleet_trace_off prints the count, after a control write
# (read_ahead_kb's own value, counted too) shows the count is real: "N control C".
fleet_trace_on() {
	guest 't=/sys/kernel/tracing
		[ -e $t/trace ] || mount -t tracefs tracefs $t
		f=
		for fn in queue_attr_store elv_attr_store ioc_qos_write ioc_cost_model_write; do
			grep -qx $fn $t/available_filter_functions && f="$f $fn"
		done
		echo "$f" >$t/set_ftrace_filter
		echo function >$t/current_tracer
		echo >$t/trace
		echo 1 >$t/tracing_on'
}

fleet_trace_off() {
	local dev
	dev=$(disk_of iosvd2q)
	guest 't=/sys/kernel/tracing
		n=$(grep -vc "^#" $t/trace)
		grep -v "^#" $t/trace | head -n 10 >&2
		echo >$t/trace
		ra=$(cat /sys/block/'"$dev"'/queue/read_ahead_kb)
		echo $ra >/sys/block/'"$dev"'/queue/read_ahead_kb
		c=$(grep -vc "^#" $t/trace)
		echo 0 >$t/tracing_on
		echo nop >$t/current_tracer
		echo >$t/set_ftrace_filter
		echo "$n control $c"'
}

# fleet_writes_are N TRACE_OUTPUT WHAT: the count of fleet_trace_off is N and its control 1.
fleet_writes_are() {
	local n c
	read -r n _ c <<<"$(tail -n1 <<<"$2")"
	echo "  $3: $n queue/iocost writes (kernel's count; control write counted $c)"
	[ "$c" = 1 ] || bad "$3: the control write was counted ${c:-?} times, not once: the count means nothing"
	[ "$n" = "$1" ] || bad "$3: $n writes to queue attributes, want $1"
}

fleet_attr() {
	guest "cat /sys/block/$(disk_of "$1")/queue/$2"
}

fleet_sched() {
	guest "sed 's/.*\[\(.*\)\].*/\1/' /sys/block/$(disk_of "$1")/queue/scheduler"
}

# The role's variables: the package under test and one drop-in for the 2-queue virtio disk.
fleet_vars() {
	cat >"$(fleet_dir)/$1.yml" <<-EOF
	iosched_package_path: $package
	iosched_dropins:
	  60-fleet.conf:
	    - name: fleet-vd2q
	      match: {serial: iosvd2q}
	      set: {read_ahead_kb: $2${3:+, nr_requests: $3}}
	EOF
	echo "$(fleet_dir)/$1.yml"
}

# First run: installs the package, writes the drop-in, brings the disks to the policy (one
# of them moved off it by hand first, one by the drop-in), and changed > 0.
check_fleet_ansible_first() {
	local vars t0 cpu
	fleet_skip && return
	[ "$package_kind" = deb ] || { skip "the role installs a .deb; this run has a destdir tree"; return; }
	fleet_ssh_setup || { bad "no ssh into the guest"; return; }
	disks_probe || { bad "cannot read the disks"; return; }
	# After apt_purge (or on its own, IOSCHED_SYSTEM_CHECKS): no iosched; the single-queue
	# virtio disk off its policy (none), the 2-queue one at the kernel's read-ahead.
	guest 'apt-get purge -y -q iosched >/dev/null 2>&1; rm -rf /etc/iosched.d' || true
	guest "echo mq-deadline >/sys/block/$(disk_of iosvd1q)/queue/scheduler; echo 128 >/sys/block/$(disk_of iosvd2q)/queue/read_ahead_kb; ! dpkg -s iosched >/dev/null 2>&1" ||
		bad "iosched is still installed before the role's first run"
	vars=$(fleet_vars first 512)
	t0=$SECONDS
	cpu=$(fleet_node_cpu)
	fleet_play "$vars" || { sed 's/^/    /' "$tmp/fleet/play.out"; bad "the first play failed"; return; }
	grep -A3 "PLAY RECAP" "$tmp/fleet/play.out" | sed 's/^/  /'
	echo "  first play: $((SECONDS - t0)) s, on the node $(( $(fleet_node_cpu) - cpu )) ms CPU"
	[ "$(fleet_recap changed)" -gt 0 ] 2>/dev/null || bad "the first play reported changed=$(fleet_recap changed)"
	guest 'dpkg -s iosched | grep -q "^Status: install ok installed"' || bad "the role did not install iosched"
	[ "$(fleet_sched iosvd1q)" = none ] || bad "iosvd1q: scheduler $(fleet_sched iosvd1q), the policy wants none"
	[ "$(fleet_attr iosvd2q read_ahead_kb)" = 512 ] || bad "iosvd2q: read_ahead_kb $(fleet_attr iosvd2q read_ahead_kb), the drop-in wants 512"
	guest 'grep -n . /etc/iosched.d/60-fleet.conf' | sed 's/^/    /'
}

# fleet_play_counted VARS [ARGS...]: fleet_play with the kernel's count of writes around it;
# sets fleet_rc (its status), fleet_trace (fleet_trace_off's) and fleet_sum (the drop-in's
# checksum before the play).
fleet_play_counted() {
	fleet_sum=$(guest 'sha256sum /etc/iosched.d/60-fleet.conf')
	fleet_trace_on || { bad "cannot start the tracer"; return 1; }
	local t0=$SECONDS cpu
	cpu=$(fleet_node_cpu)
	fleet_rc=0
	fleet_play "$@" || fleet_rc=$?
	cpu=$(( $(fleet_node_cpu) - cpu ))
	fleet_trace=$(fleet_trace_off) || { bad "tracing failed: $fleet_trace"; return 1; }
	grep -A3 "PLAY RECAP" "$tmp/fleet/play.out" | sed 's/^/  /'
	echo "  play: $((SECONDS - t0)) s, on the node $cpu ms CPU"
}

fleet_file_kept() {
	[ "$(guest 'sha256sum /etc/iosched.d/60-fleet.conf')" = "$fleet_sum" ] || bad "$1 changed the drop-in"
}

# Second run, same variables: changed=0, and not one write by the kernel's count.
check_fleet_ansible_again() {
	fleet_skip && return
	fleet_play_counted "$(fleet_vars first 512)" || return
	[ "$fleet_rc" = 0 ] || { sed 's/^/    /' "$tmp/fleet/play.out"; bad "the second play failed"; }
	[ "$(fleet_recap changed)" = 0 ] || bad "the second play reported changed=$(fleet_recap changed), want 0"
	fleet_writes_are 0 "$fleet_trace" "second play"
}

# --check --diff with a new value: the diff names the disk, the key, old and new; changed=1;
# nothing written (file and kernel).
check_fleet_ansible_check_mode() {
	local vd2q
	fleet_skip && return
	vd2q=$(disk_of iosvd2q)
	fleet_play_counted "$(fleet_vars check 1024)" --check --diff || return
	[ "$fleet_rc" = 0 ] || { sed 's/^/    /' "$tmp/fleet/play.out"; bad "the check play failed"; }
	sed -n '/^--- before: disks now/,/^$/p; /^--- before: \/etc/,/^$/p' "$tmp/fleet/play.out" | sed 's/^/    /'
	grep -q "^-$vd2q read_ahead_kb = 512$" "$tmp/fleet/play.out" &&
		grep -q "^+$vd2q read_ahead_kb = 1024  (rule fleet-vd2q, /etc/iosched.d/60-fleet.conf:" "$tmp/fleet/play.out" ||
		bad "the diff does not show $vd2q read_ahead_kb 512 -> 1024 with its rule and file"
	[ "$(fleet_recap changed)" = 1 ] || bad "the check play reported changed=$(fleet_recap changed), want 1"
	fleet_file_kept "check mode"
	fleet_writes_are 0 "$fleet_trace" "check mode"
}

# A bad value: the play fails with the drop-in's file:line; the old file stays, no write.
check_fleet_ansible_bad_policy() {
	fleet_skip && return
	fleet_play_counted "$(fleet_vars bad 1024 -5)" || return
	[ "$fleet_rc" != 0 ] || bad "the play with nr_requests = -5 succeeded"
	grep -E "/etc/iosched.d/60-fleet.conf:[0-9]+:" "$tmp/fleet/play.out" | head -n 2 | cut -c1-300 | sed 's/^/    /'
	grep -q '/etc/iosched.d/60-fleet.conf:[0-9]*: invalid value \\*"-5\\*" for nr_requests' "$tmp/fleet/play.out" ||
		bad "the failure does not name /etc/iosched.d/60-fleet.conf:LINE and the bad value"
	fleet_file_kept "the bad policy"
	[ "$(fleet_attr iosvd2q read_ahead_kb)" = 512 ] || bad "read_ahead_kb is $(fleet_attr iosvd2q read_ahead_kb), not the old policy's 512"
	fleet_writes_are 0 "$fleet_trace" "bad policy"
}

# ---------------------------------------------------------------- the container

# fleet_cm_set TEXT: the drop-in directory as kubelet writes a ConfigMap volume: the files in
# a timestamped directory, "..data" linked to it (swapped atomically), each name linked into
# ..data.
fleet_cm_set() {
	guest "set -e
		cm=/var/lib/fleet-configmap
		new=..\$(date +%Y_%m_%d_%H_%M_%S.%N)
		mkdir -p \$cm/\$new
		printf '%s' '$1' >\$cm/\$new/60-pod.conf
		ln -sfn \$new \$cm/..data_tmp
		mv -T \$cm/..data_tmp \$cm/..data
		[ -L \$cm/60-pod.conf ] || ln -s ..data/60-pod.conf \$cm/60-pod.conf"
}

fleet_pod_conf() {
	printf '[rule fleet-pod]\nmatch.serial = iosvd2q\nread_ahead_kb = %s\n' "$1"
}

# The DaemonSet's container under podman: its mounts (deploy/kubernetes/daemonset.yaml), no
# capability, no new privileges, a read-only root with /run and /tmp in memory, the host's
# network (udev's events). Waits for the readiness probe's command.
fleet_pod_start() {
	guest -t 200 "podman run -d --name iosched-pod --network host --cap-drop all \
		--security-opt no-new-privileges --read-only -e IOSCHED_POD_INTERVAL=2 \
		-v /sys:/host/sys -v /run/udev:/host/run/udev:ro -v /var/lib/fleet-configmap:/etc/iosched.d:ro \
		'$fleet_image_tag' >/dev/null
		for i in \$(seq 180); do
			podman exec iosched-pod /usr/libexec/iosched-pod ready && exit 0
			podman container inspect -f '{{.State.Running}}' iosched-pod | grep -q true || break
			sleep 1
		done
		podman logs iosched-pod | tail -n 20
		exit 1"
}

# fleet_pod_stop: the pod's last log lines and what it cost (CPU time of its cgroup, over how
# long it ran; memory now), then remove it.
fleet_pod_stop() {
	guest -t 120 'podman logs iosched-pod 2>&1 | tail -n 5 | sed "s/^/    pod: /"
		cg=$(podman container inspect -f "{{.State.CgroupPath}}" iosched-pod)
		up=$(( $(date +%s) - $(date -d "$(podman container inspect -f "{{.State.StartedAt}}" iosched-pod | cut -d" " -f1,2)" +%s) ))
		echo "  pod cost: $(( $(sed -n "s/^usage_usec //p" /sys/fs/cgroup$cg/cpu.stat) / 1000 )) ms CPU in $up s, memory $(( $(cat /sys/fs/cgroup$cg/memory.current) / 1024 )) KiB, image $(podman image ls --format "{{.Size}}" localhost/iosched:system-test)"
		podman rm -f -t 10 iosched-pod >/dev/null'
}

check_fleet_container() {
	local d image trace t0
	fleet_skip && return
	[ "$package_kind" = deb ] || { skip "the image is built from the .deb; this run has a destdir tree"; return; }
	[ -n "${fleet_ssh:-}" ] || fleet_ssh_setup || { bad "no ssh into the guest"; return; }
	d=$(fleet_dir)
	t0=$SECONDS
	IOSCHED_IMAGE_CACHE=$cache/image-debs "$src_dir/deploy/kubernetes/image/build" "$package" "$d/image.tar" \
		localhost/iosched:system-test >"$d/image.log" 2>&1 || { tail -n 20 "$d/image.log"; bad "the image build failed"; return; }
	echo "  $(tail -n1 "$d/image.log") (built in $((SECONDS - t0)) s)"
	fleet_image_tag=localhost/iosched:system-test
	t0=$SECONDS
	"${fleet_ssh[@]}" 'cat >/var/tmp/iosched-image.tar && podman load -q -i /var/tmp/iosched-image.tar && rm /var/tmp/iosched-image.tar' \
		<"$d/image.tar" | sed 's/^/  /' || { bad "podman load in the guest failed"; return; }
	echo "  copied and loaded in $((SECONDS - t0)) s"
	# No engine on the host: the pod's ioschedd is the only one.
	guest 'apt-get purge -y -q iosched >/dev/null 2>&1; ! dpkg -s iosched >/dev/null 2>&1' || bad "iosched still installed in the guest"
	guest "echo mq-deadline >/sys/block/$(disk_of iosvd1q)/queue/scheduler"
	fleet_cm_set "$(fleet_pod_conf 384)" || { bad "cannot write the ConfigMap directory"; return; }

	t0=$SECONDS
	fleet_pod_start | sed 's/^/    /' || bad "the pod did not become ready"
	echo "  first start: ready in $((SECONDS - t0)) s"
	guest 'podman exec iosched-pod /usr/libexec/iosched-pod status | head -n 4' | sed 's/^/    /'
	[ "$(fleet_sched iosvd1q)" = none ] || bad "iosvd1q: scheduler $(fleet_sched iosvd1q), the policy wants none"
	[ "$(fleet_attr iosvd2q read_ahead_kb)" = 384 ] || bad "iosvd2q: read_ahead_kb $(fleet_attr iosvd2q read_ahead_kb), the ConfigMap wants 384"
	fleet_pod_stop

	fleet_trace_on || { bad "cannot start the tracer"; return; }
	fleet_pod_start | sed 's/^/    /' || bad "the pod did not become ready the second time"
	trace=$(fleet_trace_off) || { bad "tracing failed: $trace"; return; }
	fleet_writes_are 0 "$trace" "second start"

	# The ConfigMap changes: the pod sees it, checks it and calls Reload: one write.
	fleet_trace_on || { bad "cannot start the tracer"; return; }
	fleet_cm_set "$(fleet_pod_conf 448)"
	guest -t 120 "for i in \$(seq 60); do [ \$(cat /sys/block/$(disk_of iosvd2q)/queue/read_ahead_kb) = 448 ] && podman exec iosched-pod /usr/libexec/iosched-pod ready && exit 0; sleep 1; done; exit 1" ||
		bad "the ConfigMap change did not reach the disk: read_ahead_kb $(fleet_attr iosvd2q read_ahead_kb)"
	trace=$(fleet_trace_off) || { bad "tracing failed: $trace"; return; }
	fleet_writes_are 1 "$trace" "ConfigMap change"
	guest 'podman logs iosched-pod 2>&1 | grep -c "configuration changed: reloaded"' | grep -qx 1 ||
		bad "the pod did not log one reload"

	# A bad value in the ConfigMap: logged with file:line, the pod not ready, nothing written.
	fleet_trace_on || { bad "cannot start the tracer"; return; }
	fleet_cm_set "$(fleet_pod_conf -3)"
	guest -t 120 'for i in $(seq 60); do podman logs iosched-pod 2>&1 | grep "not loaded" && break; sleep 1; done' |
		cut -c1-200 | sed 's/^/    /'
	guest 'podman logs iosched-pod 2>&1' | grep -q 'not loaded (the previous one stays): errors: /etc/iosched.d/60-pod.conf:3: invalid value "-3" for read_ahead_kb' ||
		bad "the pod did not log the bad drop-in with its file:line"
	guest -t 60 '! podman exec iosched-pod /usr/libexec/iosched-pod ready' || bad "the pod is ready with a bad policy"
	trace=$(fleet_trace_off) || { bad "tracing failed: $trace"; return; }
	[ "$(fleet_attr iosvd2q read_ahead_kb)" = 448 ] || bad "read_ahead_kb is $(fleet_attr iosvd2q read_ahead_kb), not the previous policy's 448"
	fleet_writes_are 0 "$trace" "bad ConfigMap"
	fleet_pod_stop
	guest 'podman rmi -f localhost/iosched:system-test >/dev/null; rm -rf /var/lib/fleet-configmap'
}
