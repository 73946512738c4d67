"""Claims and findings as DataFrames: reproduce gives those of the report `mobmem run`
writes (claims.json byte for byte), read_claims and read_findings read a report folder,
shipped experiments are named or edited as dicts; bad folders and files are clear
errors."""

from __future__ import annotations

import copy
import json
import math
import pathlib

import pandas as pd
import pytest

import mobmem
from mobmem import _native
from support import small_experiment, write_toml
from test_kinds import KSM

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cli_report(tmp_path_factory, cli):
    """The small KSM grid (with the ksm paper's analysis, two seeds) as a file, and the
    report folder `mobmem run` wrote for it."""
    folder = tmp_path_factory.mktemp("claims")
    path = write_toml(folder / "ksm.toml", KSM)
    code, _, stderr = cli("run", path, "--out", folder / "report")
    assert code == 0, stderr
    return path, folder / "report"


def test_reproduce_gives_the_cli_reports_claims_findings_and_results(cli_report):
    path, report = cli_report
    ours = mobmem.reproduce(path)
    assert ours.experiment == "ksm-small"
    written = report / "ksm-small"
    pd.testing.assert_frame_equal(ours.results, mobmem.read_results(written / "results.csv"),
                                  check_exact=True)
    pd.testing.assert_frame_equal(ours.claims, mobmem.read_claims(written), check_exact=True)
    pd.testing.assert_frame_equal(ours.findings, mobmem.read_findings(written), check_exact=True)
    # The native report is the CLI's files, byte for byte.
    csv_text, claims_json, findings_json = mobmem._experiment.load_experiment(path).report()
    assert csv_text == (written / "results.csv").read_text()
    assert claims_json == (written / "claims.json").read_text()
    assert findings_json == (written / "findings.json").read_text()

    claims = ours.claims
    from_file = json.loads(claims_json)
    # The columns, and where the claims say who makes them, `source` after `unit`.
    columns = list(claims.columns)
    if any("source" in c for c in from_file):
        assert columns.pop(columns.index("unit") + 1) == "source"
        assert claims["source"].tolist() == [c.get("source") for c in from_file]
    assert tuple(columns) == mobmem.CLAIM_COLUMNS
    assert claims["id"].tolist() == [c["id"] for c in from_file]
    assert (claims["seeds"] == 2).all()
    # Every number as the file has it, null as NaN; the interval's ends in their columns.
    for row, c in zip(claims.itertuples(), from_file):
        for ours_value, theirs in [(row.paper, c["paper"]), (row.mean, c["mean"]),
                                   (row.ci95_low, c["ci95"][0]), (row.ci95_high, c["ci95"][1])]:
            assert (math.isnan(ours_value) and theirs is None) or ours_value == theirs
        assert row.verdict == c["verdict"] and row.expect == c["expect"]["kind"]
        assert len(row.values) == 2
    tested = claims[claims["verdict"] != "not-testable"]
    assert len(tested) > 0 and tested["mean"].notna().all()
    assert (tested["ci95_low"] <= tested["mean"]).all()
    assert (tested["mean"] <= tested["ci95_high"]).all()
    bounded = claims[claims["expect"].isin(["at-least", "at-most"])]
    assert len(bounded) > 0 and bounded["bound"].notna().all()


def test_a_claims_sensitivity_to_a_parameter_and_to_the_seeds():
    base = mobmem.reproduce(KSM)
    changed = copy.deepcopy(KSM)
    changed["pages_to_scan"] = [20, 400]
    other = mobmem.reproduce(changed)
    assert base.claims["id"].tolist() == other.claims["id"].tolist()
    assert not base.results.equals(other.results)
    three = mobmem.reproduce(KSM, seeds=3)
    assert (three.claims["seeds"] == 3).all()
    assert three.results["seed"].drop_duplicates().tolist() == [1, 2, 3]
    # The first two seeds' values are the two-seed run's.
    for a, b in zip(base.claims["values"], three.claims["values"]):
        assert len(b) == 3
        assert all((math.isnan(x) and math.isnan(y)) or x == y for x, y in zip(a, b[:2]))


def test_a_shipped_reproduction_runs_by_name():
    listed = mobmem.reproductions()
    assert listed["name"].tolist() == [
        "hybrid-cache", "multi-swap", "page-protection", "selective-page-cache", "ksm",
        "composed",
    ]
    ran = mobmem.reproduce("composed", seeds=1)
    assert ran.experiment == "composed"
    # The file mobmem ships is the repository's experiments/composed.toml.
    pd.testing.assert_frame_equal(
        ran.results, mobmem.run_experiment(REPO / "experiments" / "composed.toml", seeds=1),
        check_exact=True,
    )
    assert len(ran.claims) > 0 and ran.claims["id"].is_unique
    assert set(ran.claims["verdict"]) <= {"reproduced", "direction-only", "not-reproduced",
                                          "not-testable"}
    with pytest.raises(mobmem.MobmemError, match="no shipped experiment 'kms' \\(shipped: "
                       "hybrid-cache, .*, composed, phone-2012, phone\\)"):
        mobmem.reproduce("kms", seeds=1)


def test_a_shipped_experiment_is_a_dict_to_edit():
    ksm = mobmem.shipped_experiment("ksm")
    assert ksm["kind"] == "ksm" and ksm["reproduces"] == "ksm" and ksm["name"] == "ksm"
    phone = mobmem.shipped_experiment("phone")
    assert phone["kind"] == "phone" and phone["memory"]["dram_mib"] == 8192
    # The dict parses back to the file mobmem ships.
    assert (_native.Experiment.from_json(json.dumps(phone), "phone", ".").to_toml()
            == _native.Experiment.shipped("phone").to_toml())
    with pytest.raises(mobmem.MobmemError, match="no shipped experiment 'phone-2013'"):
        mobmem.shipped_experiment("phone-2013")


def test_an_experiment_without_an_analysis_has_no_claims():
    report = mobmem.reproduce(small_experiment(name="plain"))
    assert report.claims.empty and tuple(report.claims.columns) == mobmem.CLAIM_COLUMNS
    assert report.findings.empty and tuple(report.findings.columns) == mobmem.FINDING_COLUMNS
    pd.testing.assert_frame_equal(report.results, mobmem.run_experiment(small_experiment(
        name="plain")), check_exact=True)


def test_claims_of_a_trace_read_from_a_url_are_refused(trace_file):
    with pytest.raises(mobmem.MobmemError, match="workload file is read from a URL"):
        mobmem.reproduce(small_experiment(trace=trace_file.as_uri()))


def claim(id: str, **more) -> dict:
    c = {"id": id, "claim": f"claim {id}", "paper": 2.0, "unit": "x", "seeds": 1,
         "mean": 2.5, "ci95": [2.5, 2.5], "verdict": "reproduced", "explanation": None,
         "expect": {"kind": "value"}, "values": [2.5]}
    c.update(more)
    return c


def write_report(folder: pathlib.Path, name: str, claims: list, findings: list | None = None):
    (folder / name).mkdir(parents=True)
    (folder / name / "claims.json").write_text(json.dumps(claims))
    (folder / name / "findings.json").write_text(json.dumps(findings or []))
    (folder / name / "report.json").write_text(json.dumps({"experiment": name}))


def test_a_report_folder_of_several_experiments_reads_in_the_order_they_ran(tmp_path):
    write_report(tmp_path, "b-first", [claim("one"), claim("two", paper=None, mean=None,
                                                           ci95=[None, None])])
    write_report(tmp_path, "a-second", [claim("three", expect={"kind": "at-least",
                                                                  "bound": 1.5}),
                                        claim("four", expect={
                                            "kind": "not-testable", "why": "calibrated",
                                            "claimed": {"kind": "at-least", "bound": 50}})],
                 [{"id": "f", "text": "a finding", "seeds": 1}])
    write_report(tmp_path, "c-unlisted", [])
    (tmp_path / "provenance.json").write_text(json.dumps({"experiments": ["b-first",
                                                                          "a-second"]}))
    claims = mobmem.read_claims(tmp_path)
    assert claims[["experiment", "id"]].values.tolist() == [
        ["b-first", "one"], ["b-first", "two"], ["a-second", "three"], ["a-second", "four"]]
    assert math.isnan(claims["paper"][1]) and math.isnan(claims["ci95_high"][1])
    assert claims["bound"][2] == 1.5 and math.isnan(claims["bound"][0])
    # A claim made not testable keeps the bound the paper claimed.
    assert claims["expect"][3] == "not-testable" and claims["bound"][3] == 50
    assert claims.dtypes["mean"] == "float64" and claims.dtypes["seeds"] == "int64"
    findings = mobmem.read_findings(tmp_path)
    assert findings.values.tolist() == [["a-second", "f", "a finding", 1]]
    # One experiment's folder alone.
    only = mobmem.read_claims(tmp_path / "a-second")
    assert only["id"].tolist() == ["three", "four"]


def test_a_source_column_follows_the_unit_where_claims_give_one(tmp_path):
    write_report(tmp_path, "without", [claim("one")])
    write_report(tmp_path, "with", [claim("two", source="Fig. 4")])
    claims = mobmem.read_claims(tmp_path)
    columns = list(claims.columns)
    assert columns[columns.index("unit") + 1] == "source"
    by_id = claims.set_index("id")["source"]
    assert by_id["two"] == "Fig. 4" and pd.isna(by_id["one"])
    assert "source" not in mobmem.read_claims(tmp_path / "without").columns


def test_bad_report_folders_are_clear_errors(tmp_path):
    with pytest.raises(mobmem.MobmemError, match="no-such: no such report folder"):
        mobmem.read_claims(tmp_path / "no-such")
    (tmp_path / "empty").mkdir()
    with pytest.raises(mobmem.MobmemError, match="no claims.json in it or in its folders"):
        mobmem.read_claims(tmp_path / "empty")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "claims.json").write_text("[{")
    with pytest.raises(mobmem.MobmemError, match="broken/claims.json: not JSON"):
        mobmem.read_claims(tmp_path / "broken")
    (tmp_path / "broken" / "claims.json").write_text(json.dumps({"id": "x"}))
    with pytest.raises(mobmem.MobmemError, match="claims.json: expected a list, got dict"):
        mobmem.read_claims(tmp_path / "broken")
    (tmp_path / "broken" / "claims.json").write_text(json.dumps([claim("x", mean="high")]))
    with pytest.raises(mobmem.MobmemError, match="claim 1, `mean`: expected a number, got 'high'"):
        mobmem.read_claims(tmp_path / "broken")
    bad = claim("x")
    del bad["verdict"]
    (tmp_path / "broken" / "claims.json").write_text(json.dumps([claim("w"), bad]))
    with pytest.raises(mobmem.MobmemError, match="claim 2: no `verdict`"):
        mobmem.read_claims(tmp_path / "broken")

