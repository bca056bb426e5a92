#!/usr/bin/env python3
"""Turn the guest logs of kernel-patches/verify into the before/after table.

usage: report.py [--kernel 7.3-fixes|7.3-next|6.12] BASE.log PATCHED.log SOURCE-DEB STRESS-SECONDS
       report.py --prefixes BASE.log PREFIX-1.log ... PATCHED.log
       report.py --blktests DIR ONLINE/CPUS TEST...

Each X.log is the serial console of the main boot of a kernel; the disk-add
benchmark boot of the same kernel (QEMU -icount) is read from X.addbench.log
next to it.  Prints Markdown and exits non-zero if a required result is
missing or a check fails.  Every figure comes from the logs; nothing is
filled in here.
"""
import os
import re
import sys

# Same-value writes (and writes that fail or are clamped to the current
# value) that a series must make (almost) free: patched median below
# FREE_RATIO of the unpatched median measured in the same run.  On 7.3
# nr_requests and read_ahead_kb were free already; on 6.12 everything froze.
SAME_ORDER = ["scheduler:none", "scheduler:mq-deadline", "scheduler:bfq", "wbt_lat_usec",
              "nr_requests", "read_ahead_kb", "max_sectors_kb", "async_depth",
              "nomerges", "rq_affinity", "io_poll", "io_poll_delay", "io_timeout",
              "nr_requests:below-min", "scheduler:unknown", "async_depth:none",
              "io.cost.qos", "io.cost.model", "zoned_qd1_writes", "zoned_qd1_writes:1",
              "wbt_lat_usec:0-bfq", "wbt_lat_usec:0-iocost"]
# The wbt "0" write-back checks fail wherever that write turns wbt off for good.
WBT_READBACK = {"wbt-0-readback-bfq", "wbt-0-readback-iocost"}
KERNELS = {
    # 7.3.4 against 7.3.4 + linux-7.3-fixes
    "7.3-fixes": {
        "names": ("7.3.4", "+fixes"),
        "free": ["scheduler:none", "scheduler:mq-deadline", "scheduler:bfq",
                 "wbt_lat_usec", "max_sectors_kb"],
        "cheaper": {},
        "not_slower": [],
        "ratio": 0.02,
        "addbench": True,
        # Checks that fail before because of the bugs the series fixes.
        "base_failures": {"none-keeps-nr_requests", "shared-tags-no-ebusy"} | WBT_READBACK,
        # Checks that fail after too: the next series is about them.
        "after_failures": {"shared-tags-no-ebusy"} | WBT_READBACK,
    },
    # 7.3.4 + fixes against 7.3.4 + fixes + linux-7.3-next
    "7.3-next": {
        "names": ("+fixes", "+fixes+next"),
        "free": ["async_depth", "nr_requests:below-min", "async_depth:none", "io.cost.qos",
                 "io.cost.model", "zoned_qd1_writes", "zoned_qd1_writes:1",
                 "wbt_lat_usec:0-bfq", "wbt_lat_usec:0-iocost", "scheduler:unknown"],
        "cheaper": {},
        # Free before and after: the checks the series adds before the
        # trylock must not make them slower (write/read, see the cheap table).
        "not_slower": ["nr_requests", "read_ahead_kb", "scheduler"],
        "ratio": 0.02,
        "addbench": False,
        "base_failures": {"shared-tags-no-ebusy"} | WBT_READBACK,
        "after_failures": set(),
    },
    "6.12": {
        "names": ("6.12.118", "+carry"),
        "free": ["scheduler:none", "scheduler:mq-deadline", "scheduler:bfq",
                 "wbt_lat_usec", "nr_requests", "read_ahead_kb",
                 "nomerges", "rq_affinity", "io_poll", "io_poll_delay", "io_timeout",
                 "io.cost.qos", "io.cost.model"],
        "ratio": 0.01,
        "cheaper": {},
        "not_slower": [],
        "addbench": False,
        # the guest skips the nr_hw_queues test on 6.12 (it oopses there, see README)
        "nrhwq": False,
        "base_failures": WBT_READBACK,
        "after_failures": WBT_READBACK,
    },
}
NOT_SLOWER_MAX = 1.15
# The two kernels' names in the tables (set from KERNELS[...]["names"]).
B, P = "unpatched", "patched"
ADD_P50_MAX_RATIO = 0.75


def parse(path):
    r = parse_log(path)
    bench = path[:-len(".log")] + ".addbench.log" if path.endswith(".log") else None
    r["bench"] = parse_log(bench) if bench and os.path.exists(bench) else None
    if r["bench"]:
        # The benchmark boot's checks count like the main boot's.
        r["checks"] += [("addbench/" + c[0], c[1], c[2]) for c in r["bench"]["checks"]]
        r["dmesg"] += r["bench"]["dmesg"]
    return r


def parse_log(path):
    r = {"same": {}, "cheap": {}, "nrhwq": None, "nrhwq-lost": None, "add": None, "checks": [], "stress": None, "iops": {}, "shared": None, "modprobe": {},
         "info": {}, "kernel": "?", "dmesg": [], "end": False,
         "addbench": None, "elvset": None}
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            i = line.find("KT ")
            if i < 0:
                continue
            w = line[i + 3:].split()
            if not w:
                continue
            if w[0] == "same" and len(w) >= 6:
                owc = float(w[6]) if len(w) >= 7 else None
                r["same"][w[1]] = (float(w[2]), int(w[3]), int(w[4]), int(w[5]), owc)
            elif w[0] == "add" and len(w) >= 6:
                r["add"] = tuple(int(x) for x in w[1:6])
            elif w[0] == "addbench" and len(w) >= 6:
                r["addbench"] = tuple(int(x) for x in w[1:6])
            elif w[0] == "elvset" and len(w) >= 7:
                r["elvset"] = tuple(int(x) for x in w[1:7])
            elif w[0] == "check" and len(w) >= 3:
                r["checks"].append((w[1], w[2], " ".join(w[3:])))
            elif w[0] == "modprobe" and len(w) >= 4:
                r["modprobe"][w[1]] = (int(w[2]), int(w[3]))
            elif w[0] == "cheap" and len(w) >= 5:
                r["cheap"][w[1]] = (float(w[2]), float(w[3]), int(w[4]))
            elif w[0] == "nrhwq" and len(w) >= 6:
                r["nrhwq"] = tuple(int(x) for x in w[1:6])
            elif w[0] == "nrhwq-lost" and len(w) >= 5:
                r["nrhwq-lost"] = tuple(int(x) for x in w[1:5])
            elif w[0] == "shared" and len(w) >= 6:
                r["shared"] = tuple(int(x) for x in w[1:6])
            elif w[0] == "stress" and len(w) >= 7:
                r["stress"] = tuple(int(x) for x in w[1:7])
            elif w[0] == "iops" and len(w) >= 3:
                r["iops"][w[1]] = int(w[2])
            elif w[0] == "info" and len(w) >= 3:
                r["info"][w[1]] = w[2]
            elif w[0] == "kernel" and len(w) >= 2:
                r["kernel"] = w[1]
            elif w[0] == "dmesg":
                r["dmesg"].append(" ".join(w[1:]))
            elif w[0] == "end":
                r["end"] = True
    return r


def ms(us):
    return f"{us / 1000:.3f}"


def kernel_rows(base, patched, key, what, columns, cells, problems):
    """One table row per kernel from the tuple r[key], formatted by cells()."""
    print("| kernel | " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for name, r in ((B, base), (P, patched)):
        t = r[key]
        if t:
            print(f"| {name} | " + " | ".join(str(c) for c in cells(t)) + " |")
        else:
            print(f"| {name} | missing |" + " |" * (len(columns) - 1))
            problems.append(f"{name}: no {what} result")


def prefixes(paths):
    """One column per kernel: unpatched, each prefix of the series, all patches."""
    runs = [parse(p) for p in paths]
    cols = ["unpatched"] + [f"+{i}" for i in range(1, len(runs) - 1)] + ["all"]
    print("Same-value write() medians (ms) and disk-add times (ms) per prefix of "
          "the series (+N = patches 1..N applied):\n")
    print("| | " + " | ".join(cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for a in SAME_ORDER:
        cells = [ms(r["same"][a][0]) if a in r["same"] else "-" for r in runs]
        print(f"| {a} | " + " | ".join(cells) + " |")
    def bench(r, key, idx, fmt=ms):
        b = r["bench"]
        return fmt(b[key][idx]) if b and b[key] else "-"

    for label, idx in (("disk add p50, -icount", 1), ("disk add p99, -icount", 2)):
        print(f"| {label} | " + " | ".join(bench(r, "addbench", idx) for r in runs) + " |")
    print("| elevator_set_default() p50, -icount | "
          + " | ".join(bench(r, "elvset", 1) for r in runs) + " |")
    print("| setups that quiesced | "
          + " | ".join(f"{bench(r, 'elvset', 3, str)}/{bench(r, 'elvset', 0, str)}"
                       for r in runs) + " |")
    for label, idx in (("disk add p50, host clock", 1), ("disk add p99, host clock", 2)):
        cells = [ms(r["add"][idx]) if r["add"] else "-" for r in runs]
        print(f"| {label} | " + " | ".join(cells) + " |")
    for s in ("mq-deadline", "none"):
        cells = [str(r["iops"].get(s, "-")) for r in runs]
        print(f"| QD1 IOPS {s} | " + " | ".join(cells) + " |")
    cells = [r["info"].get("read_ahead_kb-after-same-max_sectors_kb", "-") for r in runs]
    print("| read_ahead_kb after same max_sectors_kb | " + " | ".join(cells) + " |")
    cells = []
    for r in runs:
        fails = [c[0] for c in r["checks"] if c[1] == "FAIL"]
        cells.append("pass" if r["end"] and not fails else ("FAIL " + ",".join(fails)))
    print("| checks | " + " | ".join(cells) + " |")
    return 0


def label(t):
    """A result's name as the table shows it: TEST[+norewriter|+rateN][+memMIB][+cpusN][+trixie]
    (verify's IOSCHED_BLKTESTS_NO_REWRITER, IOSCHED_BLKTESTS_REWRITER_RATE,
    IOSCHED_BLKTESTS_MEMORY, IOSCHED_BLKTESTS_CPUS and IOSCHED_BLKTESTS_RELEASE)."""
    name, *conds = t.split("+")
    words = ["without the rewriter" if c == "norewriter"
             else f"rewriter at {c[4:]} writes/s" if c.startswith("rate")
             else f"{c[4:]} vCPUs online" if c.startswith("cpus")
             else "Debian 13 guest" if c == "trixie" else f"{c[3:]} MiB guest"
             for c in conds]
    return f"{name} ({', '.join(words)})" if words else name


def blktests(d, cpus, tests):
    """The table of verify --blktests from DIR/results-{unpatched,patched}.KEY.txt,
    KEY that of the kernel built now (DIR/kernel-{unpatched,patched}/key).
    CPUS is ONLINE/CPUS as verify boots the guest: its vCPUs online by default
    (a result named TEST+cpusN had N) of all it has, its nr_cpu_ids.

    Exit 0: every test has a result on both kernels, none passes unpatched and
    fails patched, the patched guest died in none and its kernel log has no
    finding that 7.3.4's has not in the same test;
    3: results missing (run again); 1: otherwise."""
    m = re.fullmatch(r"(\d+)/(\d+)", cpus)
    assert m, f"ONLINE/CPUS: {cpus}"
    online, nr_cpus = m.groups()
    kinds = ("unpatched", "patched")
    res = {k: {} for k in kinds}
    dmesg = {}
    for k in kinds:
        path = os.path.join(d, f"kernel-{k}", "key")
        key = open(path).read().strip() if os.path.exists(path) else "none"
        path = os.path.join(d, f"results-{k}.{key}.txt")
        if os.path.exists(path):
            for line in open(path, errors="replace"):
                w = line.split()
                if len(w) >= 8:
                    res[k][w[0]] = w[1:8]
        path = os.path.join(d, f"dmesg-{k}.{key}.txt")
        dmesg[k] = open(path, errors="replace").read().splitlines() if os.path.exists(path) else []

    def cell(r, norewriter):
        if not r:
            return "not run yet"
        status, secs, writes, ebusy, enoent, errors, slowest = r
        if norewriter and secs != "-":
            return f"{status}, {secs} s; no rewriter"
        if writes == "-":
            return f"{status}"
        return (f"{status}, {secs} s; rewriter {writes} writes, {ebusy} EBUSY, "
                f"{enoent} ENOENT/ENODEV, {errors} other errors, slowest "
                f"{int(slowest) / 1000:.1f} ms")

    print("blktests (a608cb5) in a Debian 12 guest (but those marked \"Debian 13 guest\"), QEMU TCG, "
          f"{online} vCPUs online of {nr_cpus} (nr_cpu_ids {nr_cpus}); kernels built with "
          "PROVE_LOCKING, KASAN, DEBUG_ATOMIC_SLEEP; beside every test (but those marked \"without the rewriter\") the same-value "
          "rewriter (the current scheduler, \"none\" included, and nr_requests of every "
          "disk but the root, 20 writes a second on both kernels, or as many as they let through):\n")
    print("| test | unpatched 7.3.4 | patched (fixes + next) |")
    print("|---|---|---|")
    missing, problems = 0, []
    for t in tests:
        b, p = res["unpatched"].get(t), res["patched"].get(t)
        print(f"| {label(t)} | {cell(b, '+norewriter' in t)} | {cell(p, '+norewriter' in t)} |")
        missing += (not b) + (not p)
        if b and p and b[0] == "pass" and p[0] != "pass":
            problems.append(f"{t}: passes unpatched, {p[0]} patched")
        if p and p[0] == "died":
            problems.append(f"{t}: the patched guest died in it")
    # A finding is the test it came in and its line, timestamps and numbers
    # left out; one the patched kernel shares with 7.3.4 in the same test
    # (the same lockdep chain, the same warning) is 7.3.4's, not the series'.
    def finding(line):
        w = line.split(" ", 1)
        test, text = ("-", line) if line.startswith("[") or len(w) < 2 else w
        text = re.sub(r"^\[[ 0-9.]*\] *", "", text)
        return test, re.sub(r"0x[0-9a-f]+|\d+", "N", text)

    ours = {finding(line) for line in dmesg["unpatched"]}
    for k in kinds:
        for line in dmesg[k][:60]:
            shared = " (also on 7.3.4)" if k == "patched" and finding(line) in ours else ""
            print(f"    {k} kernel log: {line}{shared}")
    new = [line for line in dmesg["patched"] if finding(line) not in ours]
    if new:
        problems.append(f"patched: {len(new)} lockdep/KASAN/warning lines in the kernel log that 7.3.4's has not in the same test")
    print()
    for pr in problems:
        print(f"FAIL: {pr}")
    if problems:
        return 1
    if missing:
        print(f"{missing} results still to come.")
        return 3
    print("Every listed test ran on both kernels; none passes unpatched and fails patched; "
          "the patched kernel's log has nothing that 7.3.4's has not.")
    return 0


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--prefixes":
        return prefixes(sys.argv[2:])
    if len(sys.argv) > 3 and sys.argv[1] == "--blktests":
        return blktests(sys.argv[2], sys.argv[3], sys.argv[4:])
    argv = sys.argv[1:]
    kernel = "7.3"
    if len(argv) > 1 and argv[0] == "--kernel":
        kernel, argv = argv[1], argv[2:]
    if len(argv) != 4 or kernel not in KERNELS:
        print(__doc__, file=sys.stderr)
        return 2
    k = KERNELS[kernel]
    global B, P
    B, P = k["names"]
    base, patched = parse(argv[0]), parse(argv[1])
    deb, seconds = argv[2], argv[3]
    problems = []

    print(f"Source: {deb}; kernels: {B} `{base['kernel']}`, {P} "
          f"`{patched['kernel']}`; QEMU TCG, 2 vCPUs, lockdep on.\n")
    print("Same-value writes: 1 untimed write, then 20 timed ones; the write() call "
          "alone (where the store method runs), and open+write+close for reference; ms:\n")
    print(f"| attribute | {B} write() median | {P} write() median | {P}/{B} "
          f"| {B} min-max | {P} min-max | open+write+close {B} / {P} |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for a in SAME_ORDER:
        b, p = base["same"].get(a), patched["same"].get(a)
        if not b and not p and a not in k["free"]:
            continue  # the attribute does not exist on this kernel
        if not b or not p:
            problems.append(f"no same-value result for {a}")
            print(f"| {a} | {ms(b[0]) if b else 'missing'} | "
                  f"{ms(p[0]) if p else 'missing'} | | | | |")
            continue
        ratio = p[0] / b[0] if b[0] else float("inf")
        owc = (f"{ms(b[4])} / {ms(p[4])}" if b[4] is not None and p[4] is not None else "-")
        print(f"| {a} | {ms(b[0])} | {ms(p[0])} | {ratio * 100:.1f}% | "
              f"{ms(b[1])}-{ms(b[2])} | {ms(p[1])}-{ms(p[2])} | {owc} |")
        if a in k["free"] and not ratio < k["ratio"]:
            problems.append(f"{a}: {P} median is {ratio * 100:.1f}% of {B} "
                            f"(must be < {k['ratio'] * 100:.0f}%)")
        if a in k["cheaper"] and not ratio < k["cheaper"][a]:
            problems.append(f"{a}: {P} median is {ratio * 100:.1f}% of {B} "
                            f"(must be < {k['cheaper'][a] * 100:.0f}%)")
    print("\n(nr_requests:below-min: nr_requests 4, writing 1, which is clamped to 4; "
          "scheduler:unknown: an unknown name, fails with EINVAL; every kernel requests the "
          "module bogus-iosched for it (see the modprobe table), timed here with "
          "/proc/sys/kernel/modprobe empty, so that request_module() returns at once and "
          "what remains is the store's own work; async_depth:none: "
          "async_depth of a queue without an elevator, fails with EINVAL; io.cost.*: "
          "the cgroup2 root's files, the same user parameters written again; nomerges, "
          "rq_affinity, io_poll (fails, EINVAL: no poll queues), io_poll_delay, io_timeout: "
          "the current value; zoned_qd1_writes(:1): a zoned null_blk disk, 0 and 1; "
          "wbt_lat_usec:0-bfq/-iocost: the 0 that wbt off by default reads, written back, "
          "one write per round on a new disk.)")

    print("\nmodprobe runs (request_module()) during the same-value scheduler writes "
          "(the program in /proc/sys/kernel/modprobe replaced by a script that logs "
          "its calls):\n")
    print(f"| writes of | {B} | {P} |")
    print("|---|---:|---:|")
    for a in ("scheduler:none", "scheduler:mq-deadline", "scheduler:bfq", "scheduler:unknown"):
        b, p = base["modprobe"].get(a), patched["modprobe"].get(a)
        cell = lambda m: f"{m[0]} in {m[1]} writes" if m else "missing"
        print(f"| {a} | {cell(b)} | {cell(p)} |")
        if a == "scheduler:unknown":
            continue  # "bogus-iosched" might exist: requesting it is right
        if not p:
            problems.append(f"{P}: no modprobe count for {a}")
        elif p[0]:
            problems.append(f"{P}: {p[0]} modprobe runs during {p[1]} writes of {a}")

    print("\nTwo null_blk disks sharing one tag set (shared_tags=1): one switches "
          "scheduler and nr_requests in a loop, the other's current scheduler "
          "(mq-deadline, then none) and nr_requests are written again:\n")
    kernel_rows(base, patched, "shared", "shared-tags",
                ("seconds", "sibling changes", "same-value writes", "EBUSY", "errors"),
                lambda t: t, problems)

    if k.get("nrhwq", True):
        print("\nOne null_blk disk whose nr_hw_queues a child changes in a loop (submit_queues "
              "1 <-> 2), which leaves it without its elevator and with nr_requests reset for "
              "a while: first the current scheduler and nr_requests written again; then \"none\" "
              "written to it on mq-deadline, and read back once an update that started after "
              "the write has finished (undone: the write returned success, the queue is back "
              "on mq-deadline):\n")
        kernel_rows(base, patched, "nrhwq", "nr_hw_queues",
                    ("seconds", "updates", "same-value writes", "EBUSY", "errors"),
                    lambda t: t, problems)
        print()
        kernel_rows(base, patched, "nrhwq-lost", "nr_hw_queues lost-write",
                    ("updates", "none writes that succeeded", "none writes with EBUSY", "undone"),
                    lambda t: t, problems)

    print("\nWrites that are free on both kernels, each write() of the current value "
          "paired with a read() of the attribute (same code on both) so that the host's "
          "load, which differs between the two boots, cancels out; medians in us:\n")
    print(f"| attribute | {B} write | {B} read | {B} write/read | {P} write | {P} read "
          f"| {P} write/read | {P}/{B} |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for a in sorted(set(base["cheap"]) | set(patched["cheap"])):
        b, p = base["cheap"].get(a), patched["cheap"].get(a)
        if not b or not p:
            problems.append(f"no write/read pair result for {a}")
            continue
        rb, rp = b[0] / b[1], p[0] / p[1]
        print(f"| {a} | {b[0]:.1f} | {b[1]:.1f} | {rb:.2f} | {p[0]:.1f} | {p[1]:.1f} "
              f"| {rp:.2f} | {rp / rb * 100:.0f}% |")
        if a in k["not_slower"] and not rp <= rb * NOT_SLOWER_MAX:
            problems.append(f"{a}: write/read {rp:.2f} with {P}, {rb:.2f} with {B} "
                            f"(must be <= {NOT_SLOWER_MAX * 100:.0f}%)")
    for a in k["not_slower"]:
        if a not in base["cheap"] or a not in patched["cheap"]:
            problems.append(f"no write/read pair result for {a}")

    if k["addbench"]:
        addbench_table(base, patched, problems)
    else:
        print("\n(No disk-add benchmark boot for this kernel: it times the "
              "elevator_set_default() quiesce of 7.3, which this kernel does not have.)")
    return finish(base, patched, seconds, problems, k)


def addbench_table(base, patched, problems):
    print("\nAdding disks with a default elevator: null_blk through configfs, 1 hardware "
          "queue (so mq-deadline is set by elevator_set_default()), memory_backed=0; time "
          "of the `power` write (add_disk()). A boot of its own per kernel under QEMU "
          "`-icount shift=0,sleep=off`: guest time advances 1 ns per executed instruction "
          "and jumps over idle periods, so the figures do not depend on the host's load; "
          "elevator_set_default() and, inside it, blk_mq_quiesce_queue() and "
          "synchronize_rcu() traced with the function graph tracer; ms:\n")
    print("| kernel | disks | add p50 | add p99 | add max | got mq-deadline "
          "| elevator_set_default() p50 | p99 | setups that quiesced "
          "| synchronize_rcu() calls | synchronize_rcu() p50 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in ((B, base), (P, patched)):
        b = r["bench"]
        a, e = (b["addbench"], b["elvset"]) if b else (None, None)
        if not a:
            problems.append(f"{name}: no disk-add benchmark result"
                            + ("" if b else " (no .addbench.log)"))
            print(f"| {name} | missing | | | | | | | | | |")
            continue
        if not e:
            # The adds were timed but the trace is missing: show the times,
            # the criterion below still needs the trace.
            problems.append(f"{name}: no trace of the default elevator setup")
            print(f"| {name} | {a[0]} | {ms(a[1])} | {ms(a[2])} | {ms(a[3])} | {a[4]} "
                  "| no trace | | | | |")
            continue
        print(f"| {name} | {a[0]} | {ms(a[1])} | {ms(a[2])} | {ms(a[3])} | {a[4]} "
              f"| {ms(e[1])} | {ms(e[2])} | {e[3]} of {e[0]} | {e[4]} | {ms(e[5])} |")
    bb, pb = base["bench"], patched["bench"]
    if bb and pb and bb["addbench"] and pb["addbench"] and bb["elvset"] and pb["elvset"]:
        ratio = pb["addbench"][1] / bb["addbench"][1]
        eratio = pb["elvset"][1] / bb["elvset"][1] if bb["elvset"][1] else float("inf")
        print(f"\n{P} / {B}: add p50 {ratio * 100:.1f}%, "
              f"elevator_set_default() p50 {eratio * 100:.1f}%")
        # The comparison only means something if the unpatched kernel took
        # the path patch 3 removes on every add, and the patched one never.
        e = bb["elvset"]
        if e[3] != e[0] or e[4] < e[0]:
            problems.append(f"{B}: {e[3]} of {e[0]} default elevator setups quiesced "
                            f"the queue ({e[4]} synchronize_rcu() calls): the benchmark "
                            "does not exercise what patch 3 removes")
        e = pb["elvset"]
        if e[3] or e[4]:
            problems.append(f"{P}: {e[3]} of {e[0]} default elevator setups quiesced "
                            f"the queue ({e[4]} synchronize_rcu() calls)")
        if not ratio < ADD_P50_MAX_RATIO:
            problems.append(f"disk add p50 ratio {ratio * 100:.1f}% is not clearly lower "
                            f"(must be < {ADD_P50_MAX_RATIO * 100:.0f}%)")


def finish(base, patched, seconds, problems, k):

    print("\nThe adds of the main boot, host clock (informational: there the guest clock "
          "is the host's, the guest's CPU work emulated by TCG takes as long as the host's "
          "load makes it, and its spread hides the grace period; see README):\n")
    print("| kernel | disks | p50 | p99 | max | got mq-deadline |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, r in ((B, base), (P, patched)):
        a = r["add"]
        if not a:
            problems.append(f"{name}: no disk-add result")
            print(f"| {name} | missing | | | | |")
            continue
        print(f"| {name} | {a[0]} | {ms(a[1])} | {ms(a[2])} | {ms(a[3])} | {a[4]} |")

    print("\n4k O_DIRECT reads at queue depth 1, one null_blk disk with one "
          "hardware queue, 3 s (informational, TCG timing):\n")
    print(f"| scheduler | {B} IOPS | {P} IOPS |")
    print("|---|---:|---:|")
    for s in ("mq-deadline", "none"):
        print(f"| {s} | {base['iops'].get(s, 'missing')} | {patched['iops'].get(s, 'missing')} |")

    ra_b = base["info"].get("read_ahead_kb-after-same-max_sectors_kb", "?")
    ra_p = patched["info"].get("read_ahead_kb-after-same-max_sectors_kb", "?")
    print(f"\nread_ahead_kb set to 16, then max_sectors_kb rewritten unchanged: "
          f"read_ahead_kb reads {ra_b} ({B}), {ra_p} ({P}).")

    print(f"\nScheduler, wbt_lat_usec, nr_requests and max_sectors_kb switching "
          f"on two disks for {seconds} s while dd runs on both, with a second "
          "process rewriting current values:\n")
    kernel_rows(base, patched, "stress", "stress",
                ("changing writes", "same-value writes", "EBUSY", "errors",
                 "slowest write (ms)"),
                lambda t: t[1:5] + (ms(t[5]),), problems)

    print("\nChecks (changing writes, read-back, lockdep, kernel log):\n")
    print(f"| check | {B} | {P} |")
    print("|---|---|---|")
    names = []
    for r in (base, patched):
        for c in r["checks"]:
            if c[0] not in names:
                names.append(c[0])

    def summary(r, n):
        res = [c[1] for c in r["checks"] if c[0] == n]
        if not res:
            return "not run"
        fails = res.count("FAIL")
        return f"{len(res) - fails}/{len(res)} pass" if fails else f"pass ({len(res)})"

    for n in names:
        print(f"| {n} | {summary(base, n)} | {summary(patched, n)} |")

    for name, r in ((B, base), (P, patched)):
        if not r["end"]:
            problems.append(f"{name}: the guest did not finish")
        if r["bench"] and not r["bench"]["end"]:
            problems.append(f"{name}: the disk-add benchmark guest did not finish")
        for c in r["checks"]:
            if c[1] != "FAIL":
                continue
            detail = f"{name}: check {c[0]} failed: {c[2]}"
            if name == B and c[0] in k["base_failures"]:
                print(f"\nExpected on {B}: {c[0]}: {c[2]}")
            elif name == B:
                print(f"\n{B} (the kernel compared against, not counted): {detail}")
            elif c[0] in k["after_failures"]:
                print(f"\nExpected on {P} too (the next series is about it): {c[0]}: {c[2]}")
            else:
                problems.append(detail)
        for d in r["dmesg"][:40]:
            print(f"    {name} dmesg: {d}")
    for name, r in ((B, base), (P, patched)):
        if not r["checks"]:
            problems.append(f"{name}: no checks ran")
    if not any(c[0] == "dmesg" and c[1] == "PASS" for c in patched["checks"]):
        problems.append(f"{P}: kernel log check did not pass")

    print()
    if problems:
        for p in problems:
            print(f"FAIL: {p}")
        return 1
    print(f"All required results present; every check of {P} passed.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
