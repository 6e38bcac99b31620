"""The benchmark command cannot rot: its smoke mode runs in the test suite, and
its check mode (`--check`, benchmarks/targets.py) is tested on made-up runs."""

import io
import json
import subprocess
import sys

import pytest
from conftest import ROOT

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import targets  # noqa: E402


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "bench.json"
    r = subprocess.run([sys.executable, "-m", "benchmarks", "--smoke", "--json", str(out)],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    return r, out


def test_benchmark_smoke_mode_prints_the_table(smoke):
    r, out = smoke
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    for measure in ("launch, host time per call", "launch forms", "CUDA graph replay",
                    "vector add", "add one in place", "any launch", "matmul a @ b",
                    "host to device, pageable", "allocate + free", "import",
                    "simulator: matmul shared", "simulator: first compile",
                    "sort", "argsort", "x[x > 0.5]", "Generator.random", "fft", "linalg.inv",
                    "linalg.solve"):
        assert measure in r.stdout
    assert "| measure | size | unit | pygpu | raw C | CuPy | Numba | PyTorch | NumPy |" in r.stdout
    assert out.exists() and '"rows"' in out.read_text()


def test_smoke_run_makes_a_row_for_every_target_of_the_parts_it_ran(smoke):
    r, out = smoke
    assert r.returncode == 0, r.stderr[-3000:]
    results = json.loads(out.read_text())
    assert results["smoke"] is True and "sim" in results["sections"]
    assert results["date"] and results["commit"] and results["device"]
    ids = {row["id"] for row in results["rows"]}
    wanted = {t["row"] for t in targets.load_targets()
              if targets.section_of(t["row"]) in results["sections"]}
    assert wanted - ids == set()
    # the same figures in every row: the targets' names exist in their rows
    rows = {row["id"]: row for row in results["rows"]}
    for t in targets.load_targets():
        if t["row"] in rows:
            num, _, ref = targets.parse_metric(t["metric"])
            row = rows[t["row"]]
            for name in num + ref:
                known = name in row["values"] or name in row["refs"] or (
                    name.endswith("*") and any(k.startswith(name[:-1]) for k in row["values"]))
                assert known, f"{t['row']}: {name!r} is not a figure of the row"


def test_smoke_results_are_not_judged(smoke):
    _, out = smoke
    buf = io.StringIO()
    assert targets.check(out, out=buf) == 2
    assert "smoke" in buf.getvalue()


# ---- the check, on made-up runs -----------------------------------------------------------

TARGETS = """
[[target]]
row = "launch.forms"
metric = "pygpu k(d) / raw C 2 args"
op = "<="
threshold = 1.10

[[target]]
row = "add.any.float32"
metric = "pygpu * / d2d copy"
op = ">="
threshold = 0.90

[[target]]
row = "import"
metric = "pygpu - NumPy"
op = "<="
threshold = 50

[[target]]
row = "sim.compile.first"
metric = "pygpu"
op = "<"
threshold = 2.0

[[target]]
row = "multi.peer_copy"
metric = "pygpu / raw C cudaMemcpyPeer"
op = ">="
threshold = 0.95
"""


def run_with(**changes):
    rows = {
        "launch.forms": dict(unit="us", values={"pygpu k(d)": 3.3, "raw C 2 args": 3.1,
                                                "CuPy RawKernel": None}),
        "add.any.float32": dict(unit="GB/s", values={"pygpu launch_config": 3900.0,
                                                     "pygpu 1-D 1024": 3850.0},
                                refs={"d2d copy": 4200.0}),
        "import": dict(unit="ms", values={"pygpu": 200.0, "NumPy": 180.0}),
        "sim.compile.first": dict(unit="s", values={"pygpu": 0.4}),
    }
    for row_id, values in changes.items():
        if values is None:
            del rows[row_id]
        else:
            rows[row_id]["values"].update(values)
    return dict(device="NVIDIA H200", date="2026-11-22 12:00 UTC", commit="abc1234",
                smoke=False, simulator=False, sections=["gpu", "sim"],
                rows=[dict({"refs": {}}, id=k, **v) for k, v in rows.items()])


def check(tmp_path, results):
    (tmp_path / "targets.toml").write_text(TARGETS)
    (tmp_path / "results.json").write_text(json.dumps(results))
    buf = io.StringIO()
    rc = targets.check(tmp_path / "results.json", tmp_path / "targets.toml", out=buf)
    return rc, buf.getvalue()


def test_check_passes_when_every_target_is_met(tmp_path):
    rc, text = check(tmp_path, run_with())
    assert rc == 0, text
    assert "4 met, 0 missed" in text and "MISSED" not in text
    assert "1 of part 'multi'" in text  # one GPU: the two-GPU target is not run, not missed


def test_check_fails_listing_each_missed_target_with_its_figure(tmp_path):
    rc, text = check(tmp_path, run_with(**{"launch.forms": {"pygpu k(d)": 3.72},
                                           "sim.compile.first": {"pygpu": 2.5}}))
    assert rc == 1
    missed = [line for line in text.splitlines() if line.startswith("MISSED")]
    assert len(missed) == 2
    assert "launch.forms" in missed[0] and "1.20x" in missed[0] and "<= 1.1" in missed[0]
    assert "sim.compile.first" in missed[1] and "2.5 s" in missed[1]
    assert "2 met, 2 missed" in text


def test_check_judges_every_figure_a_pattern_names_by_the_worst(tmp_path):
    # one launch of six at 0.83x the copy misses, however good the others
    rc, text = check(tmp_path, run_with(**{"add.any.float32": {"pygpu (32,32)": 3500.0}}))
    assert rc == 1
    assert "MISSED add.any.float32: pygpu * / d2d copy = 0.83x" in text


def test_check_fails_when_a_row_is_missing(tmp_path):
    rc, text = check(tmp_path, run_with(**{"import": None}))
    assert rc == 1
    assert "MISSED import: pygpu - NumPy = row missing from the results" in text


def test_check_fails_when_a_figure_was_not_measured(tmp_path):
    # a peer not installed, or a feature not there yet: absent, so not met
    rc, text = check(tmp_path, run_with(**{"launch.forms": {"raw C 2 args": None}}))
    assert rc == 1
    assert "MISSED launch.forms" in text and "raw C 2 args absent" in text


def test_check_leaves_out_parts_that_did_not_run(tmp_path):
    results = run_with(**{"launch.forms": {"pygpu k(d)": 99.0}})
    results["sections"] = ["sim"]  # python -m benchmarks --sim: the GPU rows did not run
    rc, text = check(tmp_path, results)
    assert rc == 0, text
    assert "1 met, 0 missed" in text and "3 of part 'gpu'" in text


def test_check_from_the_command_line(tmp_path):
    (tmp_path / "targets.toml").write_text(TARGETS)
    for results, want in ((run_with(), 0), (run_with(**{"import": {"pygpu": 260.0}}), 1)):
        (tmp_path / "r.json").write_text(json.dumps(results))
        r = subprocess.run([sys.executable, "-m", "benchmarks", "--check", str(tmp_path / "r.json"),
                            "--targets", str(tmp_path / "targets.toml")],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert r.returncode == want, r.stdout + r.stderr
    assert "MISSED import: pygpu - NumPy = +80 ms (target <= 50)" in r.stdout


def test_a_target_without_a_threshold_or_with_an_unknown_comparison_is_refused(tmp_path):
    path = tmp_path / "targets.toml"
    path.write_text('[[target]]\nrow = "alloc"\nmetric = "pygpu / CuPy"\nop = "<="\n')
    with pytest.raises(ValueError, match="threshold"):
        targets.load_targets(path)
    path.write_text('[[target]]\nrow = "alloc"\nmetric = "pygpu / CuPy"\nop = "=<"\n'
                    'threshold = 0.5\n')
    with pytest.raises(ValueError, match="op '=<'"):
        targets.load_targets(path)


def test_the_targets_file_holds_the_issues_targets():
    ts = targets.load_targets()
    by_row = {}
    for t in ts:
        by_row.setdefault(t["row"], []).append(t)
    forms = {t["metric"].split(" / ")[0] for t in by_row["launch.forms"]}
    assert forms == {"pygpu k(d)", "pygpu kernels.add_one[g, b](d)", "pygpu add_one(d)",
                     "pygpu d + e", "pygpu RawKernel 3 args"}
    assert all(t["op"] == "<=" and t["threshold"] == 1.10 for t in by_row["launch.forms"])
    for kernel in ("add", "add_one"):
        for dtype in ("float32", "float64", "int32"):
            (t,) = by_row[f"{kernel}.any.{dtype}"]
            assert (t["metric"], t["op"], t["threshold"]) == ("pygpu * / d2d copy", ">=", 0.90)
    for dtype in ("float16", "float32", "float64", "complex64", "complex128"):
        (t,) = by_row[f"matmul.at.{dtype}"]
        assert t["threshold"] == 0.98
    for kernel in ("vector_add", "add_one", "matmul_naive", "matmul_shared"):
        speed, checked = by_row[f"sim.tutorial.{kernel}"]
        assert (speed["metric"], speed["op"], speed["threshold"]) == ("Numba / pygpu", ">=", 1000)
        assert (checked["metric"], checked["op"], checked["threshold"]) == \
            ("pygpu checked / pygpu", "<=", 10)
    assert by_row["graph.replay"][0]["op"] == "<" and by_row["graph.replay"][0]["threshold"] == 1
    # issue 23's speed table (benchmarks/api.py)
    issue23 = {t["row"]: (t["metric"], t["op"], t["threshold"]) for t in ts
               if t.get("issue") == "23.8"}
    assert issue23 == {"api.sort": ("pygpu / CuPy", ">=", 0.9),
                       "api.argsort": ("pygpu / CuPy", ">=", 0.9),
                       "api.mask": ("pygpu / PyTorch", ">=", 1.0),
                       "api.host.mask": ("pygpu", "<=", 30),
                       "api.random": ("pygpu / CuPy", ">=", 0.9),
                       "api.standard_normal": ("pygpu / PyTorch", ">=", 0.9),
                       "api.fft": ("pygpu / CuPy", ">=", 0.95),
                       "api.inv": ("pygpu / CuPy", "<=", 1.05),
                       "api.solve": ("pygpu / CuPy", "<=", 1.05)}
