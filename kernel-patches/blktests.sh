# kernel-patches/blktests.sh: verify --blktests, sourced by verify after its
# check stages (log, pass, die, stage, finish, patches, pname, src_base and
# cache come from there).
#
# Builds the unpatched and the patched 7.3 kernel (tinyconfig plus
# blktests.fragment: PROVE_LOCKING, KASAN, DEBUG_ATOMIC_SLEEP, null_blk,
# scsi_debug, nvme-loop, dm-crypt as modules), a Debian 12 image with blktests
# (../shared/blktests) built in it, and boots each kernel in QEMU (TCG) on the
# tests not run yet on it.  Every test runs with the same-value rewriter beside
# it (guest/blktests-init).  Results accumulate per kernel and kernel key in
# $cache/blktests/results-KERNEL.KEY.txt (the kernel log's findings in
# dmesg-KERNEL.KEY.txt), so a run that stops (a time limit, a hung guest, the
# session) continues where it stopped, and a kernel whose code changed runs
# every test again; --blktests-reset starts over.  Only this guest's disks are
# touched.

blktests_src=${IOSCHED_BLKTESTS:-$here/../../shared/blktests}
bt=$cache/blktests
bt_minutes=${IOSCHED_BLKTESTS_MINUTES:-90}
# IOSCHED_BLKTESTS_UNTIL (a time date -d reads, e.g. 12:55): both guests end
# by then; see bt_limit.
bt_until=
# IOSCHED_BLKTESTS_PARALLEL=1: both guests boot at once, each with the whole
# time limit (no split), instead of one after the other.
bt_parallel=${IOSCHED_BLKTESTS_PARALLEL:-0}
case "$bt_parallel" in 0 | 1) ;; *) die "IOSCHED_BLKTESTS_PARALLEL: 0 or 1: $bt_parallel" ;; esac
# IOSCHED_BLKTESTS_WATCH=SECONDS: the guest prints every SECONDS its disks'
# I/O counts, hctx busy and zone write plugs, and the stacks of its D-state
# tasks and of fio/cryptsetup/dd (BT watch lines of the console), and
# reports every hung task after 120 s: whether a test that takes long hangs
# or moves.  It only reads, so it is not part of a result's name.
bt_watch=${IOSCHED_BLKTESTS_WATCH:-}
[[ "$bt_watch" =~ ^([1-9][0-9]*)?$ ]] || die "IOSCHED_BLKTESTS_WATCH: seconds: $bt_watch"
if [ -n "${IOSCHED_BLKTESTS_UNTIL:-}" ]; then
	bt_until=$(date -d "$IOSCHED_BLKTESTS_UNTIL" +%s) ||
		die "IOSCHED_BLKTESTS_UNTIL: not a time: $IOSCHED_BLKTESTS_UNTIL"
	# a time of day already past is tomorrow's (01:30 given at 23:00)
	if [ "$bt_until" -le "$(date +%s)" ] && [[ "$IOSCHED_BLKTESTS_UNTIL" =~ ^[0-9]{1,2}:[0-9]{2}(:[0-9]{2})?$ ]]; then
		bt_until=$(date -d "tomorrow $IOSCHED_BLKTESTS_UNTIL" +%s)
	fi
	[ "$bt_until" -gt "$(date +%s)" ] || die "IOSCHED_BLKTESTS_UNTIL: $IOSCHED_BLKTESTS_UNTIL is past"
fi
# A guest starts no test in the last bt_margin seconds of its time limit: a
# test of the list takes 1-3 min under TCG + KASAN, and a guest that ends by
# itself reads the kernel log and debug_locks, one the limit kills does not.
bt_margin=180
# The review's list (kernel-review-v2.md section 6): block/, throtl/, zbd/,
# scsi/010 and its NVMe tests that run over the loop transport (nvme/048
# needs tcp, rdma or fc; nvme/032 a PCI controller: see the README).
bt_default="block/001 block/005 block/014 block/015 block/016 block/020 block/021 block/022
block/027 block/029 block/030 block/031 block/035 block/037 block/038 block/040 block/047
throtl/001 throtl/002 throtl/003 throtl/004 throtl/005 throtl/006 throtl/007 throtl/008
zbd/012 zbd/013 scsi/010 nvme/040 nvme/053"
bt_pkgs=bash,fio,util-linux,kmod,udev,nvme-cli,e2fsprogs,cryptsetup-bin,dmsetup,gawk,procps,psmisc,sg3-utils,bc,xfsprogs,coreutils,diffutils,findutils,grep,sed,jq

[ -d "$blktests_src/tests" ] || die "no blktests at $blktests_src (set IOSCHED_BLKTESTS)"
mkdir -p "$bt"
[ "$bt_reset" = 0 ] || { log "forgetting earlier blktests results"; rm -f "$bt"/results-*.txt "$bt"/dmesg-*.txt; }
# Results from before the key was part of their name were made by the
# kernels the cache holds (the key a kernel was built with is kept beside it).
for bt_kind in unpatched patched; do
	[ -f "$bt/kernel-$bt_kind/key" ] || continue
	for bt_file in results dmesg; do
		[ ! -f "$bt/$bt_file-$bt_kind.txt" ] ||
			mv "$bt/$bt_file-$bt_kind.txt" "$bt/$bt_file-$bt_kind.$(cat "$bt/kernel-$bt_kind/key").txt"
	done
done
[ -n "$bt_tests" ] || bt_tests=$bt_default
for t in $bt_tests; do
	[ -f "$blktests_src/tests/$t" ] || die "no blktests test $t"
done
# IOSCHED_BLKTESTS_MEMORY (MiB of guest memory, default 7168: throtl/006 runs the guest out of memory in 3072 under KASAN) and
# IOSCHED_BLKTESTS_NO_REWRITER (tests that run without the rewriter) are part
# of a result's name (and IOSCHED_BLKTESTS_REWRITER_RATE, below): TEST, TEST+norewriter, TEST+mem6144,
# TEST+norewriter+mem6144.  A result made without the rewriter or with other
# memory is never taken for one of the default run, and a test with a result
# runs again under other conditions.
bt_mem_default=7168
bt_mem=${IOSCHED_BLKTESTS_MEMORY:-$bt_mem_default}
if ! [[ "$bt_mem" =~ ^[0-9]+$ ]] || [ "$bt_mem" -lt 1024 ]; then
	die "IOSCHED_BLKTESTS_MEMORY: MiB, at least 1024: $bt_mem"
fi
# IOSCHED_BLKTESTS_CPUS (the guest's online vCPUs, default 2); results of
# another count are named TEST+cpusN.  No more than the kernels'
# CONFIG_NR_CPUS (blktests.fragment): the kernel would use no more.  The
# guest always has CONFIG_NR_CPUS vCPUs, of which the kernel brings up
# IOSCHED_BLKTESTS_CPUS (maxcpus=; the others stay halted, costing the host
# nothing), so nr_cpu_ids is CONFIG_NR_CPUS: block/038 writes 4 to null_blk's
# submit_queues, which null_blk refuses (EINVAL) beyond nr_cpu_ids.  (QEMU's
# -smp maxcpus= would not do: the kernel counts its not-enabled MADT entries
# only under a hypervisor it knows, and TCG is not one.)
bt_cpus_default=2
bt_cpus=${IOSCHED_BLKTESTS_CPUS:-$bt_cpus_default}
bt_nr_cpus=$(sed -n 's/^CONFIG_NR_CPUS=//p' "$here/blktests.fragment")
if ! [[ "$bt_cpus" =~ ^[1-9][0-9]*$ ]] || [ "$bt_cpus" -gt "${bt_nr_cpus:-1}" ]; then
	die "IOSCHED_BLKTESTS_CPUS: 1 to blktests.fragment's CONFIG_NR_CPUS (${bt_nr_cpus:-none}): $bt_cpus"
fi
bt_norewriter=" $(echo "${IOSCHED_BLKTESTS_NO_REWRITER:-}" | tr , ' ') "
for t in $bt_norewriter; do
	[[ " $bt_tests " == *" $t "* ]] || die "IOSCHED_BLKTESTS_NO_REWRITER: $t is not a test of this run"
done
# IOSCHED_BLKTESTS_RELEASE (bookworm, the default, or trixie): the Debian
# release of the guest's userland, its own image (root, root-trixie);
# results of a trixie guest are named TEST+trixie.  For nvme/040: bookworm's
# nvme-cli 2.3 exits 1 after a connect that worked (see the README).
bt_release=${IOSCHED_BLKTESTS_RELEASE:-bookworm}
case "$bt_release" in bookworm | trixie) ;; *) die "IOSCHED_BLKTESTS_RELEASE: bookworm or trixie: $bt_release" ;; esac
# IOSCHED_BLKTESTS_REWRITER_RATE (default 20, ktest's): the rewriter's
# same-value writes a second, offered alike to both kernels; another value is
# part of the name, TEST+rateN.
bt_rw_rate_default=20 # ktest rewrite's own
bt_rw_rate=${IOSCHED_BLKTESTS_REWRITER_RATE:-$bt_rw_rate_default}
if ! [[ "$bt_rw_rate" =~ ^[1-9][0-9]*$ ]] || [ "$bt_rw_rate" -gt 10000 ]; then
	die "IOSCHED_BLKTESTS_REWRITER_RATE: writes a second, 1 to 10000: $bt_rw_rate"
fi
bt_runs=
for t in $bt_tests; do
	if [[ "$bt_norewriter" == *" $t "* ]]; then
		t=$t+norewriter
	elif [ "$bt_rw_rate" != "$bt_rw_rate_default" ]; then
		t=$t+rate$bt_rw_rate
	fi
	[ "$bt_mem" = "$bt_mem_default" ] || t=$t+mem$bt_mem
	[ "$bt_cpus" = "$bt_cpus_default" ] || t=$t+cpus$bt_cpus
	[ "$bt_release" = bookworm ] || t=$t+$bt_release
	bt_runs="$bt_runs $t"
done
# Tests on an NVMe TEST_DEV (test_device() only; nvme/053): a QEMU NVMe
# controller with a scratch namespace is attached to a guest that runs one,
# and the guest runs them with TEST_DEVS=(/dev/nvme0n1) (config-nvme-pci;
# the guest reads the list from nvme-pci-tests).
bt_nvme_pci_tests="nvme/053"
# Tests that run with every vCPU online (the guest brings the others up
# before each and takes them down after it; all-cpus-tests): nvme-fabrics
# asks for one I/O queue per online CPU, blk-mq spreads the possible ones over
# them, and a queue with only offline CPUs refuses its connect command
# (blk_mq_alloc_request_hctx(), -EXDEV), so nvme/040's connect fails on both
# kernels while CPUs are offline.
bt_all_cpus_tests="nvme/040"

# ------------------------------------------------------------- kernels
# One build directory for both kernels, in the tree verify keeps: the series
# reverted (unpatched), then applied (patched).  A kernel is rebuilt only when
# its key (the lines the fragments set, comments left out, and for the patched
# one the code of the series) changed.
bt_fragments=("$here/blktests.fragment")
bt_key() { # unpatched|patched
	{
		# what the fragments set, not their comments
		sed -E '/^# CONFIG_[A-Za-z0-9_]+ is not set$/b; /^[[:space:]]*(#|$)/d' "${bt_fragments[@]}"
		echo "$1"
		if [ "$1" = patched ]; then for p in "${patches[@]}"; do patch_code "$p"; done; fi
	} | sha256sum | cut -c1-16
}
bt_build() { # unpatched|patched
	local kind=$1 key dir build=$cache/build-blktests t=$SECONDS line
	key=$(bt_key "$kind")
	dir=$bt/kernel-$kind
	if [ "$(cat "$dir/key" 2>/dev/null)" = "$key" ] && [ -f "$dir/bzImage" ]; then
		pass "blktests kernel, $kind: built before ($key)"
		return
	fi
	if ! cmp -s <(cat "${bt_fragments[@]}") "$build/.iosched-fragment" 2>/dev/null; then
		mkdir -p "$build"
		make -s -C "$src_patched" O="$build" ARCH=x86_64 tinyconfig >/dev/null
		"$src_patched"/scripts/kconfig/merge_config.sh -m -O "$build" "$build/.config" \
			"${bt_fragments[@]}" >/dev/null
		make -s -C "$src_patched" O="$build" ARCH=x86_64 olddefconfig >/dev/null
		while read -r line; do
			case "$line" in
			CONFIG_*) grep -qx "$line" "$build/.config" || die "blktests config: $line did not stick" ;;
			esac
		done < <(cat "${bt_fragments[@]}")
		cat "${bt_fragments[@]}" >"$build/.iosched-fragment"
	fi
	log "building the $kind blktests kernel (lockdep, KASAN: long)"
	if ! make -C "$src_patched" O="$build" ARCH=x86_64 -j"$jobs" bzImage modules >"$build/build.log" 2>&1; then
		tail -n 40 "$build/build.log"
		die "blktests build failed: $kind"
	fi
	rm -rf "$dir"
	mkdir -p "$dir/modules"
	make -s -C "$src_patched" O="$build" ARCH=x86_64 INSTALL_MOD_PATH="$dir/modules" \
		INSTALL_MOD_STRIP=1 modules_install >/dev/null
	cp "$build/arch/x86/boot/bzImage" "$dir/bzImage"
	echo "$key" >"$dir/key"
	pass "blktests kernel, $kind: built in $((SECONDS - t))s"
}
# The tree as verify's build stages leave it: copy, revert what it carries.
src_patched=$cache/src/patched
applied=$cache/src/patched.applied
if [ -d "$src_patched" ] && [ -s "$applied/series" ]; then
	tac "$applied/series" | while read -r p; do
		(cd "$src_patched" && git apply -R "$applied/$p") || exit 1
	done || { log "cannot revert the previous series; starting over"; rm -rf "$src_patched"; }
fi
[ -d "$src_patched" ] || { log "copying the pristine tree"; cp -a "$src_base" "$src_patched"; }
rm -rf "$applied"
mkdir -p "$applied"
: >"$applied/series"
# The images of the other modes were built from what the tree carried.
rm -f "$cache"/images/prefix-*.bzImage

stage blktests-build
bt_build unpatched
i=0
for p in "${patches[@]}"; do
	i=$((i + 1))
	(cd "$src_patched" && git apply "$p") || die "git apply $(pname "$p")"
	name=$(printf '%02d-%s' "$i" "$(basename "$p")")
	cp "$p" "$applied/$name"
	echo "$name" >>"$applied/series"
done
bt_build patched

# ------------------------------------------------------------- image
stage blktests-image
root=$bt/root
[ "$bt_release" = bookworm ] || root=$bt/root-$bt_release
if [ ! -f "$root/.iosched-done" ]; then
	rm -rf "$root"
	mirror=$("$here/../tools/debian-mirror") || die "no Debian mirror in /etc/apt; set IOSCHED_DEBIAN_MIRROR"
	log "debootstrap $bt_release ($mirror) into $root"
	debootstrap --variant=minbase --include="$bt_pkgs" \
		--keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
		"$bt_release" "$root" "$mirror" >"$bt/debootstrap.log" 2>&1 ||
		die "debootstrap failed, see $bt/debootstrap.log"
	touch "$root/.iosched-done"
fi
# blktests, built here (bookworm: the image's release, or older than it), its config, the
# rewriter and PID 1.
rm -rf "$root/blktests"
cp -a "$blktests_src" "$root/blktests"
rm -rf "$root/blktests/results"
make -s -C "$root/blktests" >"$bt/blktests-build.log" 2>&1 || die "building blktests failed, see $bt/blktests-build.log"
cat >"$root/blktests/config" <<'EOF'
# verify --blktests: the scratch disk, short TIMED runs (TCG), NVMe over loop
TEST_DEVS=(/dev/vdb)
TIMEOUT=20
nvme_trtype=loop
EOF
sed 's|^TEST_DEVS=.*|TEST_DEVS=(/dev/nvme0n1)|' "$root/blktests/config" >"$root/blktests/config-nvme-pci"
echo "$bt_nvme_pci_tests" >"$root/blktests/nvme-pci-tests"
echo "$bt_all_cpus_tests" >"$root/blktests/all-cpus-tests"
gcc -static -O2 -Wall -Wextra -Werror -std=gnu11 -o "$root/usr/local/bin/ktest" "$here/guest/ktest.c"
install -m 0755 "$here/guest/blktests-init" "$root/blktests-init"
pass "blktests image ready (blktests $(cat "$blktests_src/.iosched-version" 2>/dev/null || echo "from $blktests_src"))"

# ------------------------------------------------------------- boots
# bt_results KIND: the results file of the kernel built now (its key), so
# that results of an earlier version of the series are neither mixed with
# these nor taken for them.
bt_results() { echo "$bt/results-$1.$(cat "$bt/kernel-$1/key").txt"; }
# bt_todo KIND: the tests of the list without a result on that kernel yet
# ("unknown", blktests recorded no status: the test did not run, is none).
bt_todo() {
	local t results
	results=$(bt_results "$1")
	for t in $bt_runs; do
		grep -q "^$t [^u]" "$results" 2>/dev/null || echo "$t"
	done
}
# bt_limit KIND: the time limit of that kernel's guest in seconds:
# IOSCHED_BLKTESTS_MINUTES, or with IOSCHED_BLKTESTS_UNTIL the time left
# until then, split between the two guests in proportion to their tests to
# run (the unpatched one boots first; the patched one gets what is left);
# with IOSCHED_BLKTESTS_PARALLEL each gets the whole time left.
bt_limit() {
	local left nu np
	if [ -z "$bt_until" ]; then
		echo $((bt_minutes * 60))
		return
	fi
	left=$((bt_until - $(date +%s)))
	if [ "$1" = unpatched ] && [ "$bt_parallel" = 0 ]; then
		nu=$(bt_todo unpatched | wc -l)
		np=$(bt_todo patched | wc -l)
		left=$((left * nu / (nu + np)))
	fi
	echo $left
}
# bt_start KIND: the guest's disks, then its QEMU in the background
# (bt_pid); bt_finish KIND waits for it and records its results.  Per kind:
# bt_pid, bt_t (start), bt_lim (time limit), empty when the guest did not boot.
declare -A bt_pid=() bt_t=() bt_lim=()
bt_start() { # unpatched|patched
	local kind=$1 todo img log limit nt nvme_pci scratch nvme_img
	bt_pid[$kind]=
	todo=$(bt_todo "$kind" | tr '\n' ',' | sed 's/,$//')
	if [ -z "$todo" ]; then
		pass "blktests, $kind: every listed test has a result"
		return
	fi
	limit=$(bt_limit "$kind")
	if [ "$limit" -le $((2 * bt_margin)) ]; then
		log "blktests, $kind: ${limit}s left until IOSCHED_BLKTESTS_UNTIL, not booted"
		return
	fi
	img=$bt/disk-$kind.img
	rm -f "$img"
	rm -rf "$root/lib/modules"
	mkdir -p "$root/lib/modules"
	cp -a "$bt/kernel-$kind/modules/lib/modules/." "$root/lib/modules/"
	truncate -s 3G "$img"
	mkfs.ext4 -q -F -L btroot -d "$root" "$img" || die "mkfs.ext4 -d for $kind failed"
	# scratch disks per kind: the two guests may run at once
	scratch=$bt/scratch-$kind.img
	truncate -s 0 "$scratch"
	truncate -s 1G "$scratch"
	nvme_img=$bt/scratch-nvme-$kind.img
	nvme_pci=()
	for nt in $bt_nvme_pci_tests; do
		[[ ",$todo," != *",$nt,"* && ",$todo," != *",$nt+"* ]] || nvme_pci=(
			-drive "file=$nvme_img,if=none,id=btnvme,format=raw,cache=unsafe"
			-device "nvme,serial=blktests,drive=btnvme")
	done
	if [ ${#nvme_pci[@]} -gt 0 ]; then
		truncate -s 0 "$nvme_img"
		truncate -s 1G "$nvme_img"
	fi
	log=$bt/console-$kind.log
	log "booting the $kind blktests kernel, ${bt_cpus} of ${bt_nr_cpus} vCPUs, ${bt_mem} MiB${nvme_pci:+ and an NVMe controller}, on: $todo (at most ${limit}s, no test started after $((limit - bt_margin))s)"
	bt_t[$kind]=$SECONDS
	bt_lim[$kind]=$limit
	timeout "$limit" qemu-system-x86_64 -accel tcg -smp "$bt_nr_cpus" -m "$bt_mem" \
		-display none -monitor none -serial "file:$log" -no-reboot \
		-kernel "$bt/kernel-$kind/bzImage" \
		-drive "file=$img,if=virtio,format=raw,cache=unsafe" \
		-drive "file=$scratch,if=virtio,format=raw,cache=unsafe" \
		"${nvme_pci[@]}" \
		-append "console=ttyS0 root=/dev/vda rw init=/blktests-init panic=-1 loglevel=5 pci=noacpi maxcpus=$bt_cpus blktests.label=$kind blktests.tests=$todo blktests.stop=$((limit - bt_margin))${bt_watch:+ blktests.watch=$bt_watch}" &
	bt_pid[$kind]=$!
}
bt_finish() { # unpatched|patched
	local kind=$1 log cur results key t=${bt_t[$1]:-} limit=${bt_lim[$1]:-}
	[ -n "${bt_pid[$kind]:-}" ] || return 0
	[ "$bt_parallel" = 0 ] || log "waiting for the $kind guest"
	wait "${bt_pid[$kind]}" || log "qemu exited with $? for $kind"
	bt_pid[$kind]=
	key=$(cat "$bt/kernel-$kind/key")
	results=$(bt_results "$kind")
	log=$bt/console-$kind.log
	tr -d '\r' <"$log" >"$log.tmp" && mv "$log.tmp" "$log"
	cat "$log" >>"$bt/console-$kind.all.log"
	# Results as they came; a test that started but has none took the guest
	# down (or the time limit did): recorded as such, not run again.
	cur=
	while read -r -a w; do
		case "${w[1]}" in
		start) cur=${w[2]} ;;
		cpus) log "$kind: CPUs ${w[*]:2}" ;;
		result) echo "${w[*]:2}" >>"$results"; cur= ;;
		dmesg) echo "${w[*]:2}" >>"$bt/dmesg-$kind.$key.txt" ;;
		stop) log "$kind: time limit near, tests from ${w[2]} on not started; they run next time" ;;
		lockdep-off) log "$kind: lockdep went off in ${w[2]}; the guest ended there, the tests after it run next time" ;;
		esac
	done < <(grep -a '^BT ' "$log")
	if [ -n "$cur" ]; then
		if [ $((SECONDS - t)) -ge "$limit" ]; then
			log "$kind: the time limit stopped the guest in $cur; it runs again next time"
		else
			echo "$cur died - - - - - -" >>"$results"
			log "$kind: the guest died in $cur (see $log)"
		fi
	fi
	pass "blktests, $kind: booted for $((SECONDS - t))s"
}
# Each guest is stopped (timeout's TERM) if verify is ended.
trap 'for p in "${bt_pid[@]}"; do [ -z "$p" ] || kill "$p" 2>/dev/null; done' EXIT
if [ "$bt_parallel" = 1 ]; then
	stage blktests-boot-both
	bt_start unpatched
	bt_start patched
	bt_finish unpatched
	bt_finish patched
else
	stage blktests-boot-unpatched
	bt_start unpatched
	bt_finish unpatched
	stage blktests-boot-patched
	bt_start patched
	bt_finish patched
fi

# ------------------------------------------------------------- report
stage blktests-report
# report.py exits 3 while results are missing: under set -e and pipefail that
# would end verify at the pipeline, before the lines below
set +e
python3 "$here/report.py" --blktests "$bt" "$bt_cpus_default/$bt_nr_cpus" $bt_runs | tee "$bt/table.md"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" = 0 ] || [ "$rc" = 3 ] || die "blktests: see the table above"
if [ "$rc" = 3 ]; then
	log "blktests: tests of the list still to run; run verify --blktests again"
	echo "verify: $passed passed, 0 failed, blktests incomplete (blktests, $((SECONDS - start))s)"
	exit 0
fi
pass "blktests: every listed test ran on both kernels; none passes unpatched and fails patched"
finish --blktests
