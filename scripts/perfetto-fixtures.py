#!/usr/bin/env python3
"""Writes the Perfetto protobuf fixtures of crates/mobmem/tests/data/perfetto/.

    python3 -m venv target/pfenv && target/pfenv/bin/pip install perfetto
    target/pfenv/bin/python3 scripts/perfetto-fixtures.py [OUT_DIR]

Needs only the standard library and the `perfetto` package from PyPI (which brings
`protobuf`); the files were made with perfetto 0.59.1 (Perfetto v59.1). Every run
writes the same bytes (`.gz` included, its header time set to 0), and prints what each
fixture holds, counted back from the files written.

The traces are built as Perfetto's tracing daemon (traced_probes) writes them; see
docs/perfetto-wire.md for the field numbers. Two of its encodings matter here:

- a `dev_t` field (`s_dev`) is not the kernel's `major << 20 | minor`: traced_probes
  rewrites it into the user-space encoding of glibc's makedev(), see `dev_userspace`;
- an ftrace event Perfetto has no message for (mm_vmscan_lru_shrink_inactive, the
  read-path filemap events, page_fault_user) is a "generic" event: either a
  GenericFtraceEvent (FtraceEvent field 327: event name, then name and value per
  field; the default before Perfetto v53) or, with `denser_generic_event_encoding`
  (the default from v53), an FtraceEvent field numbered from 65536 whose message is
  described by a DescriptorProto in its bundle's `generic_event_descriptors`.

The `.txt` fixtures hold the same events as `traceconv systrace` text, in the shape
mobmem's `--from perfetto` importer reads (crates/mobmem/src/trace/ftrace/). Devices are
printed as traceconv prints them: it takes the user-space `s_dev` for a kernel one, so
253:6 (stored as 64774) appears as `dev 0:64774` and `s_dev=64774`; the importer decodes
them back. They differ from traceconv's output in one way: the compact_sched switches,
which traceconv prints as sched_switch lines, are left out.

truncated.pftrace is the first 1122 bytes of all-events.pftrace (1743 bytes): it ends
in the middle of packet 6 (0-based) of 9, cpu 1's second ftrace bundle, whose field
header (tag and length) is bytes 1032-1034 and whose 175 bytes of contents are bytes
1035-1209; 87 of them are kept. The constants TRUNCATED_* below are checked against the
file written.
"""

from __future__ import annotations

import collections
import gzip
import importlib.metadata
import io
import pathlib
import sys
import zlib

try:
    from google.protobuf import descriptor_pb2
    from google.protobuf import unknown_fields
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
except ImportError as e:
    sys.exit(
        f"error: {e}: needs the perfetto package from PyPI, e.g. python3 -m venv "
        "target/pfenv && target/pfenv/bin/pip install perfetto, then run this script "
        "with target/pfenv/bin/python3"
    )

# The fixtures' folder, or the folder given as the first argument (the test suite writes
# them elsewhere and compares).
OUT = (
    pathlib.Path(sys.argv[1])
    if len(sys.argv) > 1
    else pathlib.Path(__file__).resolve().parent.parent / "crates/mobmem/tests/data/perfetto"
)

# Where truncated.pftrace ends (see the module documentation): checked when written.
TRUNCATED_OFFSET = 1122
TRUNCATED_PACKET = 6
TRUNCATED_PACKET_BYTES = (1035, 1210)  # the packet's contents, end excluded

# Boot time of the first packet: 12345 s after boot, in nanoseconds. Every event time
# is a whole number of microseconds, the resolution of traceconv's text.
T0 = 12_345_000_000_000
US = 1_000

PAGE_SHIFT = 12
CLONE_THREAD = 0x0001_0000
# fork() from bionic: CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD, no CLONE_THREAD.
FORK_FLAGS = 0x0120_0011
assert not FORK_FLAGS & CLONE_THREAD
# The caller address a print event carries (tracing_mark_write in the kernel).
PRINT_IP = 0xFFFF_FFC0_0812_3456

# Packet sequences, as the tracing service numbers its writers.
SEQ_SERVICE = 1
SEQ_FTRACE = 3
SEQ_PROCESS = 4
SEQ_PACKAGES = 5


def dev_kernel(major: int, minor: int) -> int:
    """A dev_t as the kernel keeps it (include/linux/kdev_t.h)."""
    return major << 20 | minor


def dev_userspace(major: int, minor: int) -> int:
    """A dev_t as traced_probes writes it: glibc's makedev() of the kernel's numbers."""
    return (
        (major & 0xFFFFF000) << 32
        | (major & 0xFFF) << 8
        | (minor & 0xFFFFFF00) << 12
        | (minor & 0xFF)
    )


# The files read: /data (dm-6, f2fs) and a second device whose minor is above 255, so
# that both halves of makedev()'s minor are used.
DEV_DATA = (253, 6)
DEV_EXT = (259, 300)
FILE_A = (DEV_DATA, 0x2F41)  # the gallery's base.apk
FILE_B = (DEV_EXT, 0xBC55)  # a music file
FILES = {FILE_A: "A", FILE_B: "B"}


# --- protobuf wire format, for what the Python classes cannot hold ------------------


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_varint(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value & 0xFFFF_FFFF_FFFF_FFFF)


def field_bytes(number: int, data: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(data)) + data


# --- events --------------------------------------------------------------------------


class Generic:
    """An ftrace event Perfetto has no message for: its group, name and fields, in the
    order of the kernel's format file, each (name, proto type, value)."""

    def __init__(self, group: str, name: str, fields: list[tuple[str, str, int]]):
        self.group = group
        self.name = name
        self.fields = fields


def vmscan_shrink_inactive(nr_scanned: int, nr_reclaimed: int) -> Generic:
    # include/trace/events/vmscan.h; int fields are int64, unsigned ones uint64.
    # reclaim_flags: RECLAIM_WB_FILE | RECLAIM_WB_ASYNC.
    return Generic(
        "vmscan",
        "mm_vmscan_lru_shrink_inactive",
        [
            ("nid", "int64", 0),
            ("nr_scanned", "uint64", nr_scanned),
            ("nr_reclaimed", "uint64", nr_reclaimed),
            ("nr_dirty", "uint64", 0),
            ("nr_writeback", "uint64", 0),
            ("nr_congested", "uint64", 0),
            ("nr_immediate", "uint64", 0),
            ("nr_activate0", "uint64", 0),
            ("nr_activate1", "uint64", 2),
            ("nr_ref_keep", "uint64", 0),
            ("nr_unmap_fail", "uint64", 0),
            ("priority", "int64", 12),
            ("reclaim_flags", "int64", 0x2 | 0x8),
        ],
    )


def filemap_range(name: str, file, index: int, last_index: int) -> Generic:
    # mm_filemap_get_pages and mm_filemap_map_pages (Linux 6.11 on).
    (dev, ino) = file
    return Generic(
        "filemap",
        name,
        [
            ("i_ino", "uint64", ino),
            ("s_dev", "uint64", dev_userspace(*dev)),
            ("index", "uint64", index),
            ("last_index", "uint64", last_index),
        ],
    )


def filemap_fault(file, index: int) -> Generic:
    (dev, ino) = file
    return Generic(
        "filemap",
        "mm_filemap_fault",
        [
            ("i_ino", "uint64", ino),
            ("s_dev", "uint64", dev_userspace(*dev)),
            ("index", "uint64", index),
        ],
    )


def page_fault_user(address: int, ip: int, error_code: int) -> Generic:
    # arch/x86/include/asm/trace/exceptions.h
    return Generic(
        "exceptions",
        "page_fault_user",
        [
            ("address", "uint64", address),
            ("ip", "uint64", ip),
            ("error_code", "uint64", error_code),
        ],
    )


class Ev:
    """One ftrace event: time (ns), CPU, the task that hit it (`task`, a thread id), its
    kind (a FtraceEvent field name, or "generic"/"dense" for a Generic) and fields."""

    def __init__(self, t_us: int, cpu: int, task: int, kind: str, **fields):
        self.ts = T0 + t_us * US
        self.cpu = cpu
        self.pid = task
        self.kind = kind
        self.fields = fields

    def name(self) -> str:
        if self.kind in ("generic", "dense"):
            return self.fields["event"].name
        return self.kind

    def fill(self, e: pb.FtraceEvent, dense_ids: dict[str, int]) -> bytes | None:
        """Set `e`; for a densely encoded generic event, return the bytes of its field
        instead (the Python class cannot hold a field of the reserved range)."""
        e.timestamp = self.ts
        e.pid = self.pid
        f = self.fields
        if self.kind == "generic":
            g = f["event"]
            e.generic.event_name = g.name
            for name, kind, value in g.fields:
                field = e.generic.field.add()
                field.name = name
                if kind == "int64":
                    field.int_value = value
                else:
                    field.uint_value = value
            return None
        if self.kind == "dense":
            g = f["event"]
            body = b"".join(field_varint(i, v) for i, (_, _, v) in enumerate(g.fields, 1))
            return field_bytes(dense_ids[g.name], body)
        if self.kind in ("mm_filemap_add_to_page_cache", "mm_filemap_delete_from_page_cache"):
            (dev, ino) = f["file"]
            m = getattr(e, self.kind)
            m.pfn = f["pfn"]
            m.i_ino = ino
            m.index = f["index"]
            m.s_dev = dev_userspace(*dev)
            return None
        if self.kind == "print":
            e.print.ip = PRINT_IP
            # The kernel ends a marker with a newline when the writer did not.
            e.print.buf = f["buf"] + "\n"
            return None
        m = getattr(e, self.kind)
        for key, value in f.items():
            setattr(m, key, value)
        return None

    def text(self) -> str:
        """The payload as traceconv prints it (see the module documentation for `dev`)."""
        f = self.fields
        if self.kind == "mm_filemap_add_to_page_cache":
            ((major, minor), ino) = f["file"]
            stored = dev_userspace(major, minor)
            return (
                f" dev {stored >> 20}:{stored & ((1 << 20) - 1)} ino {ino:x} page=0000000000000000"
                f" pfn={f['pfn']} ofs={f['index'] << PAGE_SHIFT}"
            )
        if self.kind == "mm_filemap_delete_from_page_cache":
            (dev, ino) = f["file"]
            return f" pfn={f['pfn']} i_ino={ino} index={f['index']} s_dev={dev_userspace(*dev)}"
        if self.kind == "print":
            return " " + f["buf"]
        if self.kind == "sched_switch":
            state = {0: "R", 1: "S", 2: "D"}[f["prev_state"]]
            return (
                f" prev_comm={f['prev_comm']} prev_pid={f['prev_pid']} prev_prio={f['prev_prio']}"
                f" prev_state={state} ==> next_comm={f['next_comm']} next_pid={f['next_pid']}"
                f" next_prio={f['next_prio']}"
            )
        if self.kind == "sched_wakeup":
            return (
                f" comm={f['comm']} pid={f['pid']} prio={f['prio']}"
                f" target_cpu={f['target_cpu']:03d}"
            )
        if self.kind in ("generic", "dense"):
            out = []
            for name, _, value in f["event"].fields:
                out.append(f" {name}={value}")
            return "".join(out)
        # Every other event: its protobuf fields in field-number order, in decimal.
        m = getattr(pb.FtraceEvent(), self.kind)
        order = [d.name for d in sorted(m.DESCRIPTOR.fields, key=lambda d: d.number)]
        return "".join(f" {k}={f[k]}" for k in order if k in f)


def userspace_to_dev(value: int) -> tuple[int, int]:
    major = (value >> 8) & 0xFFF | (value >> 32) & 0xFFFFF000
    minor = value & 0xFF | (value >> 12) & 0xFFFFFF00
    return (major, minor)


class Bundle:
    def __init__(self, cpu: int, events: list[Ev], compact: dict | None = None):
        self.cpu = cpu
        self.events = events
        self.compact = compact
        for e in events:
            assert e.cpu == cpu
        assert [e.ts for e in events] == sorted(e.ts for e in events)


# --- processes -----------------------------------------------------------------------


class Proc:
    def __init__(self, pid, ppid, cmdline, uid, comm, threads=(), kthread=False):
        self.pid = pid
        self.ppid = ppid
        self.cmdline = cmdline
        self.uid = uid
        self.comm = comm
        self.threads = threads  # (tid, name) besides the main thread
        self.kthread = kthread


def fill_tree(tree: pb.ProcessTree, procs: list[Proc]) -> None:
    for p in procs:
        m = tree.processes.add()
        m.pid = p.pid
        m.ppid = p.ppid
        m.cmdline.extend(p.cmdline)
        if p.kthread:
            m.cmdline_is_comm = True
            m.is_kthread = True
        m.uid = p.uid
    for p in procs:
        for tid, name in [(p.pid, p.comm), *p.threads]:
            t = tree.threads.add()
            t.tid = tid
            t.tgid = p.pid
            t.name = name


KTHREADD = Proc(2, 0, ["kthreadd"], 0, "kthreadd", kthread=True)
KSWAPD = Proc(150, 2, ["kswapd0"], 0, "kswapd0", kthread=True)
INIT = Proc(1, 0, ["/system/bin/init", "second_stage"], 0, "init")
ZYGOTE = Proc(500, 1, ["zygote64"], 0, "zygote64")
# lmkd writes oom_score_adj for ActivityManager: the task of the oom_score_adj_update events.
LMKD = Proc(330, 1, ["/system/bin/lmkd"], 1069, "lmkd")
# comm holds 15 characters (TASK_COMM_LEN 16 with the NUL).
GALLERY = Proc(
    1000, 500, ["com.example.gallery"], 10050, "com.example.gal", [(1001, "RenderThread")]
)
MUSIC = Proc(2000, 500, ["com.example.music"], 10051, "com.example.mus")
MEDIASERVER = Proc(3000, 1, ["/system/bin/mediaserver"], 1013, "mediaserver")


# --- traces --------------------------------------------------------------------------


class Trace:
    """Packets in file order, and the names traceconv would give each thread."""

    def __init__(self):
        self.raw_packets: list[bytes] = []
        self.bundles: list[Bundle] = []
        self.names: dict[int, str] = {}
        self.tgids: dict[int, int] = {}

    def packet(self) -> pb.TracePacket:
        return pb.TracePacket()

    def add(self, p: pb.TracePacket) -> None:
        self.raw_packets.append(p.SerializeToString(deterministic=True))

    def system_info(self, release: str, machine: str) -> None:
        p = self.packet()
        p.trusted_packet_sequence_id = SEQ_SERVICE
        p.system_info.utsname.sysname = "Linux"
        p.system_info.utsname.release = release
        p.system_info.utsname.version = "#1 SMP PREEMPT"
        p.system_info.utsname.machine = machine
        self.add(p)

    def process_tree(self, t_ns: int, procs: list[Proc]) -> None:
        p = self.packet()
        p.timestamp = t_ns
        p.trusted_packet_sequence_id = SEQ_PROCESS
        fill_tree(p.process_tree, procs)
        p.process_tree.collection_end_timestamp = t_ns + 150 * US
        self.add(p)
        for proc in procs:
            self.names[proc.pid] = proc.comm
            self.tgids[proc.pid] = proc.pid
            for tid, name in proc.threads:
                self.names[tid] = name
                self.tgids[tid] = proc.pid

    def packages(self, t_ns: int, packages: list[tuple[str, int, int]]) -> None:
        p = self.packet()
        p.timestamp = t_ns
        p.trusted_packet_sequence_id = SEQ_PACKAGES
        for name, uid, version in packages:
            pkg = p.packages_list.packages.add()
            pkg.name = name
            pkg.uid = uid
            pkg.debuggable = False
            pkg.profileable_from_shell = False
            pkg.version_code = version
        self.add(p)

    def ftrace(self, bundle: Bundle, dense_ids: dict[str, int] | None = None) -> None:
        """One ftrace bundle in a packet of its own, as traced_probes writes them."""
        dense_ids = dense_ids or {}
        p = self.packet()
        p.trusted_packet_sequence_id = SEQ_FTRACE
        b = p.ftrace_events
        b.cpu = bundle.cpu
        dense_used = []
        for ev in bundle.events:
            e = b.event.add()
            extra = ev.fill(e, dense_ids)
            if extra is not None:
                # The class keeps a field it does not know as an unknown field, written
                # after the known ones: timestamp, pid, then the event, as traced_probes.
                e.MergeFromString(extra)
                if ev.fields["event"].name not in dense_used:
                    dense_used.append(ev.fields["event"].name)
        if bundle.compact:
            c = b.compact_sched
            c.intern_table.extend(bundle.compact["intern"])
            prev = 0
            for ts, state, pid, prio, comm in bundle.compact["switches"]:
                # Delta-encoded: the first time is absolute, each next one relative.
                c.switch_timestamp.append(ts - prev)
                prev = ts
                c.switch_prev_state.append(state)
                c.switch_next_pid.append(pid)
                c.switch_next_prio.append(prio)
                c.switch_next_comm_index.append(bundle.compact["intern"].index(comm))
        for name in dense_used:
            # Descriptors of the generic events of this bundle, in every bundle that
            # has them; the field id stays the same for the whole trace.
            g = next(ev.fields["event"] for ev in bundle.events
                     if ev.kind == "dense" and ev.fields["event"].name == name)
            d = b.generic_event_descriptors.add()
            d.field_id = dense_ids[name]
            d.group_name = g.group
            desc = descriptor_pb2.DescriptorProto()
            desc.name = g.name
            for i, (fname, kind, _) in enumerate(g.fields, 1):
                fd = desc.field.add()
                fd.name = fname
                fd.number = i
                fd.type = (
                    descriptor_pb2.FieldDescriptorProto.TYPE_INT64
                    if kind == "int64"
                    else descriptor_pb2.FieldDescriptorProto.TYPE_UINT64
                )
            d.event_descriptor = desc.SerializeToString(deterministic=True)
        self.bundles.append(bundle)
        self.add(p)

    def bytes(self) -> bytes:
        # A Trace is its packets, each as field 1.
        return b"".join(field_bytes(1, p) for p in self.raw_packets)

    def packet_spans(self) -> list[tuple[int, int]]:
        """(first, end) byte of each packet's own bytes in the file."""
        spans = []
        at = 0
        for p in self.raw_packets:
            head = len(field_bytes(1, p)) - len(p)
            spans.append((at + head, at + head + len(p)))
            at += head + len(p)
        return spans

    def text(self) -> str:
        """The events as `traceconv systrace` text, in time order."""
        events = sorted((e for b in self.bundles for e in b.events), key=lambda e: e.ts)
        assert len({e.ts for e in events}) == len(events), "two events at the same time"
        out = [SYSTRACE_HEADER]
        for e in events:
            out.append(self.prefix(e) + " " + systrace_event_name(e.name()) + ":" + e.text() + "\n")
        return "".join(out)

    def prefix(self, e: Ev) -> str:
        # trace_processor's SystraceSerializer::SerializePrefix.
        name = self.names.get(e.pid, "") or "<unknown>"
        if e.pid == 0:
            name = "<idle>"
        name = name.replace("-", "_").rjust(16)
        tid = str(e.pid).ljust(5)
        tgid = self.tgids.get(e.pid)
        tgid = "-----" if not tgid else str(tgid).rjust(5)
        secs, rest = divmod(e.ts, 1_000_000_000)
        assert rest % US == 0
        return f"{name}-{tid} ({tgid}) [{e.cpu:03d}] .... {secs}.{rest // US:06d}:"


def systrace_event_name(name: str) -> str:
    return "tracing_mark_write" if name == "print" else name


SYSTRACE_HEADER = (
    "# tracer: nop\n"
    "#\n"
    "# entries-in-buffer/entries-written: 30624/30624   #P:4\n"
    "#\n"
    "#                                      _-----=> irqs-off\n"
    "#                                     / _----=> need-resched\n"
    "#                                    | / _---=> hardirq/softirq\n"
    "#                                    || / _--=> preempt-depth\n"
    "#                                    ||| /     delay\n"
    "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
    "#              | |        |      |   ||||       |         |\n"
)


def pfn_of(file, index: int) -> int:
    # Page frames of an arm64 phone (RAM from 0x80000000, pfn 0x80000 on).
    base = {"A": 0x9B400, "B": 0xA7200}[FILES[file]]
    return base + index * 3


def add(t_us, cpu, pid, file, index) -> Ev:
    return Ev(t_us, cpu, pid, "mm_filemap_add_to_page_cache",
              file=file, index=index, pfn=pfn_of(file, index))


def all_events() -> Trace:
    tr = Trace()
    tr.system_info("6.1.75-android14-11", "aarch64")
    tr.process_tree(T0, [INIT, KTHREADD, KSWAPD, LMKD, ZYGOTE, GALLERY, MUSIC, MEDIASERVER])
    tr.packages(
        T0 + 200 * US,
        [("com.example.gallery", 10050, 4021), ("com.example.music", 10051, 117)],
    )
    # The camera app forked during the trace: named by its events, as traceconv would
    # (the thread's last name).
    tr.names[4000] = "camera"
    tr.tgids[4000] = 4000

    input_time = T0 + 7_500 * US  # when the touch happened, 1.5 ms before delivery
    b = [
        Bundle(0, [
            Ev(1_000, 0, 330, "oom_score_adj_update",
               comm="com.example.gal", oom_score_adj=0, pid=1000),
            add(3_000, 0, 1000, FILE_A, 0),
            add(5_000, 0, 1000, FILE_A, 1),
        ]),
        Bundle(1, [
            Ev(2_000, 1, 330, "oom_score_adj_update",
               comm="com.example.mus", oom_score_adj=900, pid=2000),
            add(4_000, 1, 2000, FILE_B, 10),
            add(6_000, 1, 2000, FILE_B, 11),
        ]),
        Bundle(0, [
            add(7_000, 0, 1001, FILE_A, 2),
            Ev(9_000, 0, 1000, "print",
               buf=f"B|1000|deliverInputEvent src=0x1002 eventTimeNano={input_time}"),
            Ev(11_000, 0, 1000, "print", buf="E|1000"),
            Ev(13_000, 0, 1000, "print", buf="B|1000|Choreographer#doFrame"),
            Ev(14_000, 0, 1000, "print", buf="E|1000"),
        ]),
        Bundle(1, [
            add(8_000, 1, 2000, FILE_B, 12),
            Ev(10_000, 1, 500, "task_newtask",
               pid=4000, comm="com.example.cam", clone_flags=FORK_FLAGS, oom_score_adj=0),
            Ev(12_000, 1, 500, "sched_process_fork",
               parent_comm="zygote64", parent_pid=500,
               child_comm="com.example.cam", child_pid=4000),
            Ev(15_000, 1, 4000, "task_rename",
               pid=4000, oldcomm="com.example.cam", newcomm="camera", oom_score_adj=0),
        ]),
        Bundle(0, [
            # The camera app comes to the foreground.
            Ev(16_000, 0, 330, "oom_score_adj_update", comm="camera", oom_score_adj=0, pid=4000),
            Ev(17_000, 0, 150, "mm_filemap_delete_from_page_cache",
               file=FILE_A, index=1, pfn=pfn_of(FILE_A, 1)),
            Ev(19_000, 0, 150, "generic", event=vmscan_shrink_inactive(32, 7)),
            add(21_000, 0, 1000, FILE_A, 3),
        ]),
        Bundle(1, [
            # No tgid: upstream kernels' format has comm, pid and prio only.
            Ev(18_000, 1, 4000, "sched_process_exit", comm="camera", pid=4000, prio=120),
            add(20_000, 1, 2000, FILE_B, 13),
            Ev(22_000, 1, 1000, "sched_wakeup",
               comm="RenderThread", pid=1001, prio=110, success=1, target_cpu=1),
        ], compact={
            # Two context switches on CPU 1 in the compact encoding: the music app
            # sleeps and the gallery runs (and wakes its RenderThread), then sleeps.
            "intern": ["com.example.gal", "RenderThread"],
            "switches": [
                # (time, prev_state, next_pid, next_prio, next_comm); state 1 is S.
                (T0 + 21_000 * US, 1, 1000, 120, "com.example.gal"),
                (T0 + 22_500 * US, 1, 1001, 110, "RenderThread"),
            ],
        }),
    ]
    for bundle in b:
        tr.ftrace(bundle)
    return tr


def no_memory_events() -> Trace:
    tr = Trace()
    tr.process_tree(T0, [INIT, ZYGOTE, GALLERY])
    tr.ftrace(Bundle(0, [
        Ev(1_000, 0, 0, "sched_switch", prev_comm="swapper/0", prev_pid=0, prev_prio=120,
           prev_state=0, next_comm="com.example.gal", next_pid=1000, next_prio=120),
        Ev(2_000, 0, 1000, "print", buf="B|1000|Choreographer#doFrame"),
        Ev(3_000, 0, 1000, "print", buf="E|1000"),
        Ev(4_000, 0, 1000, "sched_switch", prev_comm="com.example.gal", prev_pid=1000,
           prev_prio=120, prev_state=1, next_comm="RenderThread", next_pid=1001, next_prio=110),
        Ev(5_000, 0, 1001, "sched_switch", prev_comm="RenderThread", prev_pid=1001,
           prev_prio=110, prev_state=1, next_comm="swapper/0", next_pid=0, next_prio=120),
    ]))
    return tr


def split_bundles() -> Trace:
    """200 page insertions over 4 CPUs in bundles of one or two events. Event k, every
    10 us: file A (even k) or B (odd k), page k // 2, by pid 1000, 2000, 1001, 3000 in
    turn, on CPU (k // 3) % 4. The tracing daemon reads the CPUs in rounds of 20 events
    (200 us): in each round one packet per CPU bundle, CPU 0 to 3, a CPU's events of the
    round cut into bundles of two and, if odd, a last one of one."""
    tr = Trace()
    tr.process_tree(T0, [INIT, ZYGOTE, GALLERY, MUSIC, MEDIASERVER])
    pids = [1000, 2000, 1001, 3000]
    events = [
        add(1_000 + 10 * k, (k // 3) % 4, pids[k % 4], FILE_A if k % 2 == 0 else FILE_B, k // 2)
        for k in range(200)
    ]
    for r in range(10):
        round_events = events[20 * r: 20 * r + 20]
        for cpu in range(4):
            mine = [e for e in round_events if e.cpu == cpu]
            for i in range(0, len(mine), 2):
                tr.ftrace(Bundle(cpu, mine[i: i + 2]))
    return tr


# Field ids of the densely encoded generic events, in the order traced_probes would meet
# them in the config (experiments/perfetto/mobmem.pbtx), from 65536.
DENSE_IDS = {
    "mm_filemap_get_pages": 65536,
    "mm_filemap_map_pages": 65537,
    "mm_filemap_fault": 65538,
    "page_fault_user": 65539,
    "mm_vmscan_lru_shrink_inactive": 65540,
}


def generic_events() -> Trace:
    """A Linux 6.12 x86-64 device (an emulator, say) and Perfetto v53 or later: the
    read-path events, user page faults and a reclaim count, all densely encoded generic
    events, beside the typed page-cache insertions of the same read."""
    tr = Trace()
    tr.system_info("6.12.23-android16-5", "x86_64")
    tr.process_tree(T0, [INIT, ZYGOTE, GALLERY])
    heap = 0x7B4C_2A10_0000
    ip = 0x7B4C_8830_1C44
    tr.ftrace(Bundle(0, [
        # read() of pages 0-7 of file A: the pages come from storage, then the batch.
        add(1_000, 0, 1000, FILE_A, 0),
        add(1_010, 0, 1000, FILE_A, 1),
        add(1_020, 0, 1000, FILE_A, 2),
        add(1_030, 0, 1000, FILE_A, 3),
        Ev(1_100, 0, 1000, "dense", event=filemap_range("mm_filemap_get_pages", FILE_A, 0, 7)),
        # Write fault, then read fault, on the heap (error_code bit 1: write; bit 2: user).
        Ev(2_000, 0, 1000, "dense", event=page_fault_user(heap, ip, 6)),
        Ev(2_500, 0, 1000, "dense", event=page_fault_user(heap + 0x3000, ip + 8, 4)),
    ]), DENSE_IDS)
    tr.ftrace(Bundle(1, [
        # RenderThread maps the file: a fault on page 8 and its fault-around 8-15.
        Ev(1_500, 1, 1001, "dense", event=filemap_fault(FILE_A, 8)),
        Ev(1_510, 1, 1001, "dense", event=filemap_range("mm_filemap_map_pages", FILE_A, 8, 15)),
        Ev(3_000, 1, 150, "dense", event=vmscan_shrink_inactive(64, 5)),
        # The same reclaim event in the older encoding (a GenericFtraceEvent).
        Ev(3_500, 1, 150, "generic", event=vmscan_shrink_inactive(32, 3)),
    ]), DENSE_IDS)
    tr.ftrace(Bundle(0, [
        Ev(4_000, 0, 1000, "dense", event=page_fault_user(heap + 0x1000, ip, 6)),
    ]), DENSE_IDS)
    return tr


# --- reading the files back ----------------------------------------------------------


def count(data: bytes) -> tuple[collections.Counter, dict]:
    """Events per kind and other contents of a serialized trace."""
    t = pb.Trace()
    t.ParseFromString(data)
    kinds: collections.Counter = collections.Counter()
    info: dict = collections.defaultdict(int)
    pages: dict = collections.defaultdict(set)
    per_cpu: collections.Counter = collections.Counter()
    sizes: collections.Counter = collections.Counter()
    switches = 0
    info["packets"] = len(t.packet)
    for p in t.packet:
        which = p.WhichOneof("data")
        if which == "process_tree":
            info["processes"] += len(p.process_tree.processes)
            info["threads"] += len(p.process_tree.threads)
        elif which == "packages_list":
            info["packages"] += len(p.packages_list.packages)
        elif which == "ftrace_events":
            b = p.ftrace_events
            info["bundles"] += 1
            per_cpu[b.cpu] += 1
            sizes[len(b.event)] += 1
            switches += len(b.compact_sched.switch_timestamp)
            ids = {}
            for d in b.generic_event_descriptors:
                desc = descriptor_pb2.DescriptorProto()
                desc.ParseFromString(d.event_descriptor)
                ids[d.field_id] = desc.name
            for e in b.event:
                name = e.WhichOneof("event")
                if name is None:
                    (number,) = [f.field_number for f in unknown_fields.UnknownFieldSet(e)]
                    kinds[f"{ids[number]} (dense generic)"] += 1
                elif name == "generic":
                    kinds[f"{e.generic.event_name} (GenericFtraceEvent)"] += 1
                else:
                    kinds[name] += 1
                if name in ("mm_filemap_add_to_page_cache",):
                    m = e.mm_filemap_add_to_page_cache
                    dev = userspace_to_dev(m.s_dev)
                    pages[(dev, m.i_ino, e.pid)].add(m.index)
        elif which:
            info[which] += 1
    if per_cpu:
        info["bundles per cpu"] = ", ".join(f"cpu {c}: {n}" for c, n in sorted(per_cpu.items()))
        info["bundles by events held"] = ", ".join(f"{n} of {k}" for k, n in sorted(sizes.items()))
    if switches:
        info["compact_sched switches"] = switches
    if pages:
        info["pages added (dev, inode, pid: pages)"] = {
            f"{d[0]}:{d[1]} {ino:#x} pid {pid}": sorted(ix)
            for (d, ino, pid), ix in sorted(pages.items())
        }
    return kinds, dict(info)


def text_counts(text: str) -> collections.Counter:
    c: collections.Counter = collections.Counter()
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        event = line.split(": ", 2)[1].split(":")[0]
        c[event] += 1
    return c


def show(name: str, data: bytes) -> None:
    kinds, info = count(data)
    print(f"{name}: {len(data)} bytes, {sum(kinds.values())} ftrace events (FtraceEvent)")
    for k, v in sorted(kinds.items()):
        print(f"  {v:4d} {k}")
    for k, v in info.items():
        if isinstance(v, dict):
            print(f"  {k}:")
            for kk, vv in v.items():
                if len(vv) < 6:
                    shown = ", ".join(map(str, vv))
                else:
                    shown = f"{vv[0]}, {vv[1]}, ..., {vv[-1]}"
                print(f"    {kk}: {len(vv)} pages: {shown}")
        else:
            print(f"  {k}: {v}")


def compressed(trace: Trace, per_batch: int) -> bytes:
    """The trace as the tracing service writes it with `compression_type:
    COMPRESSION_TYPE_DEFLATE`: its packets in batches, each batch framed as a Trace
    (field 1 per packet), deflated into one zlib stream (level 6, as the service's
    compressor) and held by a packet's `compressed_packets` (field 50)."""
    out = []
    for i in range(0, len(trace.raw_packets), per_batch):
        batch = b"".join(field_bytes(1, p) for p in trace.raw_packets[i:i + per_batch])
        p = pb.TracePacket()
        p.compressed_packets = zlib.compress(batch, 6)
        out.append(field_bytes(1, p.SerializeToString(deterministic=True)))
    return b"".join(out)


def nested_unknown(depth: int, payload: bytes) -> bytes:
    """A TracePacket of one unknown field (number 2047) nested `depth` deep around
    `payload`: every byte of its start is at least 0x20, so a look at the first bytes
    alone takes the file for text."""
    inner = payload
    for _ in range(depth):
        inner = field_bytes(2047, inner)
    p = pb.TracePacket()
    p.ParseFromString(inner)  # the schema reads it: unknown fields, kept as they are
    return inner


def write(name: str, data: bytes) -> None:
    (OUT / name).write_bytes(data)


def main() -> int:
    version = importlib.metadata.version
    print(f"perfetto {version('perfetto')}, protobuf {version('protobuf')}")
    OUT.mkdir(parents=True, exist_ok=True)

    tr = all_events()
    data = tr.bytes()
    write("all-events.pftrace", data)
    show("all-events.pftrace", data)
    text = tr.text()
    write("all-events.txt", text.encode())
    print(f"all-events.txt: {sum(text_counts(text).values())} event lines")
    for k, v in sorted(text_counts(text).items()):
        print(f"  {v:4d} {k}")

    spans = tr.packet_spans()
    first, end = spans[TRUNCATED_PACKET]
    offset = first + (end - first) // 2
    p = pb.TracePacket()
    p.ParseFromString(tr.raw_packets[TRUNCATED_PACKET])
    assert p.ftrace_events.cpu == 1 and len(p.ftrace_events.event) == 4, "not cpu 1's second bundle"
    if (offset, (first, end)) != (TRUNCATED_OFFSET, TRUNCATED_PACKET_BYTES):
        print(f"error: truncated.pftrace would end at byte {offset}, in packet bytes "
              f"{first}..{end}, not at {TRUNCATED_OFFSET} in {TRUNCATED_PACKET_BYTES}: update "
              "TRUNCATED_*, the module documentation and the README", file=sys.stderr)
        return 1
    write("truncated.pftrace", data[:offset])
    print(f"truncated.pftrace: the first {offset} of {len(data)} bytes: cut in packet "
          f"{TRUNCATED_PACKET} (0-based; bytes {first}..{end} of the file), "
          f"{len(spans)} packets in all")

    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        gz.write(data)
    write("all-events.pftrace.gz", buf.getvalue())
    assert gzip.decompress(buf.getvalue()) == data
    print(f"all-events.pftrace.gz: {len(buf.getvalue())} bytes, gzip of all-events.pftrace")

    data = compressed(tr, per_batch=3)
    write("compressed-packets.pftrace", data)
    print(f"compressed-packets.pftrace: {len(data)} bytes, the {len(tr.raw_packets)} packets of "
          "all-events.pftrace in deflated batches of 3 (compressed_packets)")

    first = nested_unknown(20, b"x" * 40)
    assert len(first) < 128 and min(first[:64]) >= 0x20, "a byte of the start looks binary"
    data = field_bytes(1, first) + tr.bytes()
    write("leading-unknown-fields.pftrace", data)
    print(f"leading-unknown-fields.pftrace: {len(data)} bytes, a packet of an unknown field "
          "nested 20 deep, then all-events.pftrace")

    data = no_memory_events().bytes()
    write("no-memory-events.pftrace", data)
    show("no-memory-events.pftrace", data)

    data = split_bundles().bytes()
    write("split-bundles.pftrace", data)
    show("split-bundles.pftrace", data)

    tr = generic_events()
    data = tr.bytes()
    write("generic-events.pftrace", data)
    show("generic-events.pftrace", data)
    text = tr.text()
    write("generic-events.txt", text.encode())
    print(f"generic-events.txt: {sum(text_counts(text).values())} event lines")
    for k, v in sorted(text_counts(text).items()):
        print(f"  {v:4d} {k}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
