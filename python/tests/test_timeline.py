"""A phone's timeline: a sample at every launch and at the end, whose last row is the
run's totals as run_experiment gives them; the same for the same seed; clear errors."""

from __future__ import annotations

import pandas as pd
import pytest

import mobmem
from support import write_toml


@pytest.fixture(scope="module")
def phone() -> dict:
    """The shipped phone, under memory pressure: half its memory."""
    phone = mobmem.shipped_experiment("phone")
    phone["memory"]["dram_mib"] = 4096
    phone["memory"]["system_mib"] = 1024
    phone["swap"]["zram_mib"] = 1024
    return phone


@pytest.fixture(scope="module")
def timeline(phone) -> pd.DataFrame:
    return mobmem.phone_timeline(phone, seed=1)


def test_the_last_sample_is_the_runs_totals(phone, timeline):
    assert tuple(timeline.columns) == mobmem.TIMELINE_COLUMNS
    assert timeline["config"].drop_duplicates().tolist() == ["all-off", "all-on"]
    results = mobmem.run_experiment(phone)
    for config, samples in timeline.groupby("config", sort=False):
        metric = results[results["config"] == config].set_index("metric")["value"]
        end = samples.iloc[-1]
        assert end["event"] == "end" and end["app"] == "" and pd.isna(end["launch_ms"])
        assert (samples["event"].iloc[:-1] == "launch").all()
        for counter in ("kills", "swap_outs", "swap_ins", "file_reads"):
            assert end[counter] == metric[counter], (config, counter)
        assert end["time_s"] == metric["duration_s"]
        # A sample per launch: the relaunches are the ones the run counts, with its times.
        relaunches = samples[samples["launch"].isin(["cold", "warm"])]
        assert len(relaunches) == metric["launches"]
        assert (relaunches["launch"] == "cold").sum() == metric["cold_launches"]
        assert relaunches["launch_ms"].mean() == pytest.approx(metric["launch_mean_ms"],
                                                               rel=1e-12)
        assert set(samples["launch"].iloc[:-1]) <= {"first", "cold", "warm"}
        assert samples["launch_ms"].iloc[:-1].gt(0).all()


def test_time_and_counters_only_go_forward(timeline):
    for _, samples in timeline.groupby("config", sort=False):
        assert samples["time_s"].is_monotonic_increasing
        for counter in ("kills", "swap_outs", "swap_ins", "file_reads"):
            assert samples[counter].is_monotonic_increasing, counter
        assert (samples[list(mobmem.plot.TIMELINE_MEMORY)] >= 0).all().all()


def test_pressure_shows_in_the_timeline(phone, timeline):
    on = timeline[timeline["config"] == "all-on"]
    off = timeline[timeline["config"] == "all-off"]
    # zram takes swapped pages into its pool and KSM saves memory with the mechanisms on;
    # with no swap and no KSM (all-off) neither does.
    assert on["swap_used_mib"].max() > 0 and on["zram_pool_mib"].max() > 0
    assert on["ksm_saved_mib"].max() > 0
    assert (off["swap_used_mib"] == 0).all() and (off["ksm_saved_mib"] == 0).all()
    # Memory fills as apps launch: less free memory at the end than at the start.
    for samples in (on, off):
        assert samples["free_mib"].iloc[-1] < samples["free_mib"].iloc[0]
    memory = phone["memory"]["dram_mib"] - phone["memory"]["system_mib"]
    held = on[["free_mib", "page_cache_mib", "anon_mib", "zram_pool_mib"]].sum(axis=1)
    assert (held <= memory).all()


def test_a_timeline_is_the_same_for_the_same_seed(phone, timeline, tmp_path):
    pd.testing.assert_frame_equal(mobmem.phone_timeline(phone, seed=1), timeline,
                                  check_exact=True)
    path = write_toml(tmp_path / "phone.toml", phone)
    only_on = mobmem.phone_timeline(path, config="all-on")
    pd.testing.assert_frame_equal(
        only_on, timeline[timeline["config"] == "all-on"].reset_index(drop=True),
        check_exact=True,
    )
    other = mobmem.phone_timeline(phone, seed=2, config="all-on")
    assert not other.equals(only_on)


def test_a_shipped_phone_by_name():
    shipped = mobmem.phone_timeline("phone-2012", config="all-off")
    assert shipped["phone"].unique().tolist() == ["phone-2012"]
    assert len(shipped) > 1


def test_timeline_errors_are_clear(phone):
    with pytest.raises(mobmem.MobmemError,
                       match="a timeline is recorded for experiments of kind 'phone'.*not 'ksm'"):
        mobmem.phone_timeline("ksm")
    with pytest.raises(mobmem.MobmemError, match="runs as `all-off` and `all-on`, not 'half-on'"):
        mobmem.phone_timeline(phone, config="half-on")
    with pytest.raises(mobmem.MobmemError, match="seed must be a whole number from 0 up, got -1"):
        mobmem.phone_timeline(phone, seed=-1)
    with pytest.raises(mobmem.MobmemError, match="unknown field `dram_mb`"):
        mobmem.phone_timeline(dict(phone, memory={"dram_mb": 1024}))
