"""`mobmem run FILE --perfetto OUT.pftrace`: a phone run as Perfetto traces, one per
configuration, read back with Perfetto's own schema (the `perfetto` package pinned in
requirements-test.txt)."""

import collections
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PHONE = ROOT / "experiments/phone.toml"
# A small phone: half the shipped scale and a few sessions of the workload.
SMALL = ["--set", "scale=0.015625", "--set", "workload.sessions=8"]

pb2 = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2")
TrackEvent = pb2.TrackEvent


def read(path):
    trace = pb2.Trace()
    trace.ParseFromString(path.read_bytes())
    return trace


@pytest.fixture(scope="module")
def traces(cli, tmp_path_factory):
    out = tmp_path_factory.mktemp("perfetto")
    code, _, err = cli(
        "run", PHONE, *SMALL, "--out", out / "runs", "--perfetto", out / "x.pftrace"
    )
    assert code == 0, err
    paths = {c: out / f"x-{c}.pftrace" for c in ("all-off", "all-on")}
    for path in paths.values():
        assert f"wrote {path}" in err
    return out, paths


def test_each_configuration_has_a_trace_with_every_thread(traces):
    _, paths = traces
    for config, path in paths.items():
        trace = read(path)
        descriptors = [p.track_descriptor for p in trace.packet if p.HasField("track_descriptor")]
        processes = {d.process.pid: d.process.process_name for d in descriptors if d.HasField("process")}
        threads = {d.thread.tid: d.thread for d in descriptors if d.HasField("thread")}
        names = {t.thread_name for t in threads.values()}
        assert {"kswapd0", "ksmd"} <= names, config
        kernel = [pid for pid, name in processes.items() if name == "kernel"]
        assert len(kernel) == 1
        apps = {pid: name for pid, name in processes.items() if name != "kernel"}
        assert "com.example.phone01" in apps.values()
        # Every app process has its thread, named as it is; every thread is in a process.
        for pid, name in apps.items():
            assert threads[pid].thread_name == name and threads[pid].pid == pid
        assert all(t.pid in processes for t in threads.values())
        assert names == set(apps.values()) | {"kswapd0", "ksmd"}


def test_slices_begin_and_end_on_their_track_in_time_order(traces):
    _, paths = traces
    for config, path in paths.items():
        trace = read(path)
        threads = {
            p.track_descriptor.uuid: p.track_descriptor.thread.thread_name
            for p in trace.packet
            if p.track_descriptor.HasField("thread")
        }
        open_slices = collections.defaultdict(list)
        last = {}
        slices = collections.Counter()
        for p in trace.packet:
            if not p.HasField("track_event"):
                continue
            e = p.track_event
            assert p.timestamp >= last.get(e.track_uuid, 0), config
            last[e.track_uuid] = p.timestamp
            if e.type == TrackEvent.TYPE_SLICE_BEGIN:
                assert e.name
                open_slices[e.track_uuid].append(p.timestamp)
                slices[threads[e.track_uuid]] += 1
            elif e.type == TrackEvent.TYPE_SLICE_END:
                assert open_slices[e.track_uuid], f"{config}: an end without a begin"
                assert open_slices[e.track_uuid].pop() <= p.timestamp
        assert not any(open_slices.values()), config
        # The apps ran: their threads have slices.
        assert sum(n for name, n in slices.items() if name.startswith("com.example")) > 0


def test_memory_and_pressure_are_counters_and_launches_instants(traces):
    _, paths = traces
    for config, path in paths.items():
        trace = read(path)
        counters = {
            p.track_descriptor.uuid: p.track_descriptor.name
            for p in trace.packet
            if p.track_descriptor.HasField("counter")
        }
        values = collections.Counter()
        instants = []
        for p in trace.packet:
            e = p.track_event
            if e.type == TrackEvent.TYPE_COUNTER:
                assert e.HasField("double_counter_value")
                values[counters[e.track_uuid]] += 1
            elif e.type == TrackEvent.TYPE_INSTANT:
                instants.append(e.name)
        for name in ("free memory", "zram pool", "memory pressure some avg10",
                     "memory pressure some total", "anonymous memory"):
            assert values[name] > 0, (config, name)
        assert any(name.startswith("launch") for name in instants), config


def test_the_same_run_writes_the_same_bytes_and_replaces_its_own(cli, traces):
    out, paths = traces
    before = {c: p.read_bytes() for c, p in paths.items()}
    code, _, err = cli(
        "run", PHONE, *SMALL, "--out", out / "runs", "--perfetto", out / "x.pftrace"
    )
    assert code == 0, err
    assert {c: p.read_bytes() for c, p in paths.items()} == before


def test_a_foreign_file_is_refused_unless_forced(cli, tmp_path):
    foreign = tmp_path / "y-all-on.pftrace"
    foreign.write_text("not mobmem's\n")
    args = ["run", PHONE, *SMALL, "--out", tmp_path / "runs", "--perfetto", tmp_path / "y.pftrace"]
    code, _, err = cli(*args)
    assert code != 0 and "not mobmem's own output" in err
    assert foreign.read_text() == "not mobmem's\n"
    assert not (tmp_path / "y-all-off.pftrace").exists()
    code, _, err = cli(*args, "--force")
    assert code == 0, err
    assert (tmp_path / "y-all-on.pftrace.replaced-1").read_text() == "not mobmem's\n"
    read(foreign)


def test_other_kinds_and_the_sum_accounting_are_clear_errors(cli, tmp_path):
    code, _, err = cli(
        "run", ROOT / "experiments/reference.toml", "--out", tmp_path / "runs",
        "--perfetto", tmp_path / "z.pftrace",
    )
    assert code != 0 and "kind 'phone'" in err
    code, _, err = cli(
        "run", PHONE, *SMALL, "--set", "time.accounting=sum", "--out", tmp_path / "runs",
        "--perfetto", tmp_path / "z.pftrace",
    )
    assert code != 0 and "accounting" in err
    assert not any(tmp_path.glob("z*"))
