"""The functions of the package, each against the CLI command it stands for, and the
errors they raise."""

from __future__ import annotations

import json
import math
import pathlib

import pandas as pd
import pytest

import mobmem
from support import small_experiment, write_toml


def cli_error(cli, *args) -> str:
    """The message the CLI prints for a failing command, without its "error: "."""
    code, _, stderr = cli(*args)
    assert code != 0
    assert stderr.startswith("error: "), stderr
    return stderr.removeprefix("error: ").strip()


def same_numbers(a: dict[str, float], b: dict[str, float]) -> bool:
    """Equal dicts of numbers, NaN equal to NaN."""
    return a.keys() == b.keys() and all(
        x == y or (math.isnan(x) and math.isnan(y)) for x, y in zip(a.values(), b.values())
    )


def test_presets_and_policies_are_the_registry(cli):
    code, listed, _ = cli("gen", "--list")
    assert code == 0
    assert mobmem.presets() == [line.split()[0] for line in listed.splitlines()]
    assert {"chrome-push", "app-switching", "app-cycling", "gallery-usb"} <= set(mobmem.presets())
    by_name = {p["name"]: p for p in mobmem.policies()}
    assert by_name["lru"]["family"] == "single-tier"
    assert by_name["app-aware"]["family"] == "hybrid"


def test_generate_writes_the_cli_trace_byte_for_byte(tmp_path, cli):
    ours = mobmem.generate("app-switching", seed=5, out=tmp_path / "ours.mmt", scale=0.01)
    assert ours == tmp_path / "ours.mmt"
    code, _, _ = cli("gen", "app-switching", "--seed", "5", "--scale", "0.01",
                     "--out", tmp_path / "cli.mmt")
    assert code == 0
    assert ours.read_bytes() == (tmp_path / "cli.mmt").read_bytes()


def test_generate_makes_every_preset_the_cli_lists(tmp_path, cli):
    for preset in mobmem.presets():
        ours = mobmem.generate(preset, seed=2, out=tmp_path / f"{preset}.mmt", scale=0.02)
        code, _, stderr = cli("gen", preset, "--seed", "2", "--scale", "0.02",
                              "--out", tmp_path / f"{preset}-cli.mmt")
        assert code == 0, stderr
        assert ours.read_bytes() == (tmp_path / f"{preset}-cli.mmt").read_bytes(), preset


def test_generate_takes_a_presets_config_and_no_background(tmp_path, cli):
    # Some of app-cycling's parameters, as a file and as a dict: `gen NAME --config`.
    (tmp_path / "w.toml").write_text("apps = 3\nrounds = 2\n")
    code, _, stderr = cli("gen", "app-cycling", "--config", tmp_path / "w.toml", "--seed", "4",
                          "--out", tmp_path / "cli.mmt")
    assert code == 0, stderr
    for config in (tmp_path / "w.toml", {"apps": 3, "rounds": 2}):
        ours = mobmem.generate("app-cycling", seed=4, config=config, out=tmp_path / "ours.mmt")
        assert ours.read_bytes() == (tmp_path / "cli.mmt").read_bytes()
    assert ours.read_bytes() != mobmem.generate(
        "app-cycling", seed=4, out=tmp_path / "preset.mmt").read_bytes()
    code, _, stderr = cli("gen", "gallery-usb", "--no-background", "--scale", "0.05",
                          "--out", tmp_path / "quiet-cli.mmt")
    assert code == 0, stderr
    quiet = mobmem.generate("gallery-usb", scale=0.05, no_background=True,
                            out=tmp_path / "quiet.mmt")
    assert quiet.read_bytes() == (tmp_path / "quiet-cli.mmt").read_bytes()
    # The CLI's errors: a preset of the app model takes no config; no background to drop.
    with pytest.raises(mobmem.MobmemError) as e:
        mobmem.generate("app-switching", config=tmp_path / "w.toml", out=tmp_path / "x.mmt")
    assert str(e.value) == cli_error(cli, "gen", "app-switching", "--config",
                                     tmp_path / "w.toml", "--out", tmp_path / "x.mmt")
    with pytest.raises(mobmem.MobmemError) as e:
        mobmem.generate("app-switching", no_background=True, out=tmp_path / "x.mmt")
    assert str(e.value) == cli_error(cli, "gen", "app-switching", "--no-background",
                                     "--out", tmp_path / "x.mmt")
    with pytest.raises(mobmem.MobmemError, match="unknown field `appz`"):
        mobmem.generate("app-cycling", config={"appz": 3})


def test_generate_without_out_summarizes(tmp_path):
    summary = mobmem.generate("app-switching", seed=5, scale=0.01)
    written = mobmem.generate("app-switching", seed=5, scale=0.01, out=tmp_path / "t.csv")
    assert summary == mobmem.trace_summary(written)
    assert summary["accesses"] == 15000
    assert not list(tmp_path.glob("*.partial"))


def test_generate_from_a_config_dict_or_file(tmp_path, cli):
    code, toml_text, _ = cli("gen", "--show", "app-switching")
    assert code == 0
    config_file = tmp_path / "w.toml"
    config_file.write_text(toml_text)
    from_file = mobmem.generate(config_file, seed=2, scale=0.01)
    from_text_path = mobmem.generate(str(config_file), seed=2, scale=0.01)
    assert from_file == from_text_path == mobmem.generate("app-switching", seed=2, scale=0.01)
    # A dict with only some keys: the rest take their defaults, as in a file.
    apps = [{"name": "a", "pid": 100}, {"name": "b", "pid": 200, "foreground_weight": 2.0}]
    small = mobmem.generate({"accesses": 2000, "apps": apps, "scale": None}, seed=1)
    assert small["accesses"] == 2000
    assert {p["name"] for p in small["processes"]} <= {"a", "b"}
    with pytest.raises(mobmem.MobmemError, match="pid"):
        mobmem.generate({"accesses": 2000, "apps": [{"name": "a"}]})
    with pytest.raises(mobmem.MobmemError, match="unknown field `acesses`"):
        mobmem.generate({"acesses": 2000})


def test_trace_summary_is_trace_info_json(trace_file, cli):
    code, stdout, _ = cli("trace", "info", trace_file, "--json")
    assert code == 0
    assert mobmem.trace_summary(trace_file) == json.loads(stdout)
    assert mobmem.trace_summary(str(trace_file), format="mmt") == json.loads(stdout)


def test_column_specs_read_as_the_cli_reads_them(tmp_path, cli):
    # A CSV of the user's own layout: objects with sizes, a read/write column.
    path = tmp_path / "requests.csv"
    path.write_text("t;key;bytes;op\n1;7;512;get\n2;8;4096;set\n3;7;512;get\n")
    spec = ("delimiter=;, has-header=true, time-col=t, obj-id-col=key, obj-size-col=bytes, "
            "op-col=op, read=get, write=set")
    code, stdout, _ = cli("trace", "info", path, "--columns", spec, "--json")
    assert code == 0
    summary = mobmem.trace_summary(path, format="csv", columns=spec)
    assert summary == json.loads(stdout)
    assert summary["accesses"] == 3 and summary["distinct_pages"] == 2
    code, stdout, _ = cli("sim", "--trace", path, "--columns", spec, "--policy", "lru",
                          "--capacity", "4096", "--json")
    assert code == 0
    ours = mobmem.simulate(path, "lru", 4096, columns=spec)
    assert ours["misses"] == json.loads(stdout)["misses"] == 2
    with pytest.raises(mobmem.MobmemError) as e:
        mobmem.trace_summary(path, columns="obj-id-col=key")
    assert str(e.value) == cli_error(cli, "trace", "info", path, "--columns", "obj-id-col=key")
    assert "needs has-header=true" in str(e.value)


@pytest.mark.parametrize(
    "policy, capacity, extra",
    [("lru", 300, []), ("opt", 300, []), ("app-aware", 500, ["--dram-fraction", "0.1"])],
)
def test_simulate_is_sim_json(trace_file, cli, policy, capacity, extra):
    code, stdout, _ = cli("sim", "--trace", trace_file, "--policy", policy,
                          "--capacity", str(capacity), "--json", *extra)
    assert code == 0
    expected = json.loads(stdout)
    dram_fraction = float(extra[1]) if extra else 0.05
    ours = mobmem.simulate(trace_file, policy, capacity, dram_fraction=dram_fraction)
    assert expected.pop("trace") == str(trace_file)
    assert expected.pop("policy") == policy
    assert set(ours) == set(expected)
    for name, value in expected.items():
        if value is None:
            assert math.isnan(ours[name]), name
        else:
            assert ours[name] == value, name


def test_simulate_warms_up_and_hashes_object_ids_as_sim_does(tmp_path, trace_file, cli):
    # 20,000 requests to 3,000 objects, skewed: w-tinylfu's sketch decides admissions
    # and its collisions depend on the keys it hashes, so hashing the object ids instead
    # of the page ids changes its misses.
    path = tmp_path / "objects.csv"
    ids, x = [], 12345
    for _ in range(20_000):
        x = (x * 6364136223846793005 + 1442695040888963407) % 2**64
        ids.append(int(3000 * ((x >> 33) / 2**31) ** 3))
    path.write_text("key\n" + "".join(f"{(k * 2654435761) % 2**40}\n" for k in ids))
    spec = "has-header=true, obj-id-col=key"
    plain = mobmem.simulate(path, "w-tinylfu", 50, columns=spec)
    hashed = mobmem.simulate(path, "w-tinylfu", 50, columns=spec, hash_object_ids=True)
    assert plain["misses"] != hashed["misses"]
    for extra, kwargs in [
        (["--warmup", "5000"], {"warmup": 5000}),
        (["--hash-object-ids"], {"hash_object_ids": True}),
        (["--warmup", "5000", "--hash-object-ids"], {"warmup": 5000, "hash_object_ids": True}),
    ]:
        code, stdout, _ = cli("sim", "--trace", path, "--columns", spec, "--policy",
                              "w-tinylfu", "--capacity", "50", "--json", *extra)
        assert code == 0
        expected = json.loads(stdout)
        ours = mobmem.simulate(path, "w-tinylfu", 50, columns=spec, **kwargs)
        assert ours["misses"] == expected["misses"], extra
        assert ours["accesses"] == expected["accesses"], extra
        # The same from the file's content in memory (a fetched trace).
        pairs = mobmem._native.simulate(
            str(path), "w-tinylfu", 50, 0.05, "paper-relative", None, path.read_bytes(),
            spec, kwargs.get("warmup", 0), kwargs.get("hash_object_ids", False),
        )
        assert same_numbers(dict(pairs), ours)
    warm = mobmem.simulate(path, "w-tinylfu", 50, columns=spec, warmup=5000)
    assert warm["accesses"] == len(ids) - 5000

    # A trace of processes' pages has no object ids: the CLI's refusal.
    with pytest.raises(mobmem.MobmemError) as e:
        mobmem.simulate(trace_file, "w-tinylfu", 100, hash_object_ids=True)
    assert str(e.value) == cli_error(cli, "sim", "--trace", trace_file, "--policy",
                                     "w-tinylfu", "--capacity", "100", "--hash-object-ids")
    assert "not objects" in str(e.value)


def test_simulate_with_the_table1_cost_model(trace_file):
    relative = mobmem.simulate(trace_file, "hybrid-lru", 400)
    assert same_numbers(relative, mobmem.simulate(trace_file, "hybrid-lru", 400))
    table1 = mobmem.simulate(trace_file, "hybrid-lru", 400, cost="table1-ns")
    assert relative["hits"] == table1["hits"]
    assert relative["fg_time"] != table1["fg_time"]


def test_errors_carry_the_cli_message(trace_file, cli, tmp_path):
    with pytest.raises(mobmem.MobmemError) as e:
        mobmem.simulate(trace_file, "nope", 100)
    assert str(e.value) == cli_error(cli, "sim", "--trace", trace_file, "--policy", "nope",
                                     "--capacity", "100")
    assert str(e.value).startswith("unknown policy 'nope' (known: lru, ")

    missing = tmp_path / "missing.mmt"
    with pytest.raises(mobmem.MobmemError) as e:
        mobmem.trace_summary(missing)
    assert str(e.value) == cli_error(cli, "trace", "info", missing)

    with pytest.raises(mobmem.MobmemError) as e:
        mobmem.simulate(trace_file, "hybrid-lru", 1)
    assert str(e.value) == cli_error(cli, "sim", "--trace", trace_file, "--policy",
                                     "hybrid-lru", "--capacity", "1")

    with pytest.raises(mobmem.MobmemError, match="at least 1 page"):
        mobmem.simulate(trace_file, "lru", -3)

    with pytest.raises(mobmem.MobmemError) as e:
        mobmem.generate("no-such-preset", out=tmp_path / "x.mmt")
    assert str(e.value) == cli_error(cli, "gen", "no-such-preset", "--out", tmp_path / "x.mmt")

    with pytest.raises(mobmem.MobmemError) as e:
        mobmem.generate("app-switching", scale=0.01, out=tmp_path / "x.txt")
    assert str(e.value).endswith("x.txt: output must end in .mmt or .csv")
    assert isinstance(e.value, Exception)


def test_experiment_errors_are_the_files_errors(tmp_path, cli):
    bad = small_experiment()
    bad["sweep"]["policies"] = ["lru", "lruu"]
    with pytest.raises(mobmem.MobmemError) as from_dict:
        mobmem.run_experiment(bad)
    with pytest.raises(mobmem.MobmemError) as from_file:
        mobmem.run_experiment(write_toml(tmp_path / "bad.toml", bad))
    expected = cli_error(cli, "run", tmp_path / "bad.toml", "--out", tmp_path / "report")
    assert str(from_dict.value) == str(from_file.value) == expected
    assert "unknown policy 'lruu'" in expected

    typo = small_experiment()
    typo["sweep"]["policy"] = typo["sweep"].pop("policies")
    with pytest.raises(mobmem.MobmemError, match="unknown field `policy`"):
        mobmem.run_experiment(typo)

    missing_trace = small_experiment(trace=str(tmp_path / "none.mmt"))
    where = "workload 'file', key `trace`: .*none.mmt: No such file"
    with pytest.raises(mobmem.MobmemError, match=where):
        mobmem.run_experiment(missing_trace)

    # Names that would make paths are refused when the experiment is read.
    for name in ["../../escaped", str(tmp_path / "abs"), ".hidden"]:
        escaping = small_experiment(trace=str(tmp_path / "t.mmt"))
        escaping["workload"][1]["name"] = name
        with pytest.raises(mobmem.MobmemError, match="workload 2, key `name`"):
            mobmem.run_experiment(escaping)
        with pytest.raises(mobmem.MobmemError, match="workload 2, key `name`"):
            mobmem.run_experiment(write_toml(tmp_path / "escaping.toml", escaping))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml", "escaping.toml"]

    with pytest.raises(mobmem.MobmemError, match="No such file"):
        mobmem.run_experiment(tmp_path / "no-experiment.toml")

    with pytest.raises(TypeError):
        mobmem.run_experiment(42)


def test_run_experiment_from_a_dict_equals_the_file(tmp_path, trace_file):
    experiment = small_experiment(trace=str(trace_file))
    from_dict = mobmem.run_experiment(experiment)
    from_file = mobmem.run_experiment(write_toml(tmp_path / "e.toml", experiment))
    pd.testing.assert_frame_equal(from_dict, from_file, check_exact=True)
    assert tuple(from_dict.columns) == mobmem.RESULT_COLUMNS
    assert set(from_dict["workload"]) == {"apps", "file"}
    # 2 workloads x (2 single-tier + 2 hybrid policies) x 3 sizes, every metric a row.
    metrics = from_dict["metric"].nunique()
    assert len(from_dict) == 2 * 4 * 3 * metrics


def test_floats_of_a_dict_read_back_exactly(tmp_path):
    # A float that JSON parsers reading it the fast way get one bit wrong.
    fraction = 7.038531e-26
    experiment = small_experiment(name="tiny")
    experiment["workload"] = experiment["workload"][:1]
    experiment["sweep"] = {"policies": ["lru"], "memory_fraction": [fraction]}
    from_dict = mobmem.run_experiment(experiment)
    assert from_dict["memory_fraction"].tolist() == [fraction] * len(from_dict)
    from_file = mobmem.run_experiment(write_toml(tmp_path / "tiny.toml", experiment))
    pd.testing.assert_frame_equal(from_dict, from_file, check_exact=True)


def test_relative_trace_paths_follow_the_experiment_file(tmp_path, trace_file, monkeypatch):
    folder = tmp_path / "exp"
    folder.mkdir()
    (folder / "t.mmt").write_bytes(trace_file.read_bytes())
    path = write_toml(folder / "e.toml", small_experiment(trace="t.mmt"))
    monkeypatch.chdir(tmp_path)
    relative = mobmem.run_experiment(pathlib.Path("exp/e.toml"))
    absolute = mobmem.run_experiment(small_experiment(trace=str(trace_file)))
    pd.testing.assert_frame_equal(relative, absolute, check_exact=True)
    assert path.exists()


def test_a_trace_url_is_read_with_fsspec(trace_file):
    url = trace_file.as_uri()
    assert url.startswith("file://")
    assert mobmem.trace_summary(url) == mobmem.trace_summary(trace_file)
    assert same_numbers(mobmem.simulate(url, "lru", 200), mobmem.simulate(trace_file, "lru", 200))
    via_url = mobmem.run_experiment(small_experiment(trace=url))
    via_path = mobmem.run_experiment(small_experiment(trace=str(trace_file)))
    pd.testing.assert_frame_equal(via_url, via_path, check_exact=True)
    # Each seed's run reads the fetched content too.
    via_url = mobmem.run_experiment(small_experiment(trace=url), seeds=2)
    via_path = mobmem.run_experiment(small_experiment(trace=str(trace_file)), seeds=2)
    pd.testing.assert_frame_equal(via_url, via_path, check_exact=True)
    assert via_url["seed"].unique().tolist() == [1, 2]
    with pytest.raises(mobmem.MobmemError, match="nowhere.mmt"):
        mobmem.trace_summary(url.replace("small.mmt", "nowhere.mmt"))


def test_results_do_not_depend_on_the_run(trace_file):
    experiment = small_experiment(trace=str(trace_file))
    pd.testing.assert_frame_equal(
        mobmem.run_experiment(experiment), mobmem.run_experiment(experiment), check_exact=True
    )


def test_a_workload_from_a_config_file_runs_like_its_preset(tmp_path, cli):
    code, toml_text, _ = cli("gen", "--show", "app-switching")
    assert code == 0
    (tmp_path / "w.toml").write_text(toml_text)
    preset = small_experiment(name="same")
    by_config = small_experiment(name="same")
    by_config["workload"] = [{"name": "apps", "config": "w.toml", "scale": 0.02}]
    from_file = mobmem.run_experiment(write_toml(tmp_path / "e.toml", by_config))
    pd.testing.assert_frame_equal(from_file, mobmem.run_experiment(preset), check_exact=True)
