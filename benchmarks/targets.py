"""The targets of benchmarks/targets.toml, judged against a run's rows.

    python -m benchmarks --check [results.json]

reads a run's saved results (default: benchmarks/results/latest.json, which
every full or --sim run writes), judges every target of targets.toml against
them, prints each missed one with the figure measured, and exits 1 when any is
missed, 0 when all are met. Rows are judged again from their figures, so a
changed threshold needs no new run.

A target names a row by its id, a metric, a comparison and a threshold:

    metric = "pygpu"                          # a figure of the row
    metric = "pygpu k(d) / raw C 2 args"      # the ratio of two figures
    metric = "pygpu - NumPy"                  # their difference
    metric = "pygpu * / d2d copy"             # every figure named "pygpu ..."
    metric = "pygpu / CuPy, Numba, PyTorch"   # against each of several
                                  # (a comma inside brackets is part of a name)

A name is one of the row's figures (its `values`, the table's cells) or its
references (`refs`: a figure that several targets divide by, such as the
device-to-device copy); `name *` is every figure whose name starts with
`name `. Where a side names several figures the worst pairing counts: every
figure must meet the target against every reference present. Absent figures
(a peer not installed) are left out; a side with none present leaves the
target unjudged, and that counts as missed.

Each row id's first part says which part of the benchmark makes it: `sim.`
rows (CPU) come from every run, `multi.` rows from GPU runs on two or more
GPUs, every other row from GPU runs. The targets of parts that did not run
(recorded in the results' `sections`) are listed as not run, not missed.
"""

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGETS = HERE / "targets.toml"
LATEST = HERE / "results" / "latest.json"
OPS = {">=": lambda x, t: x >= t, ">": lambda x, t: x > t,
       "<=": lambda x, t: x <= t, "<": lambda x, t: x < t}


def load_toml(path):
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    with open(path, "rb") as f:
        return tomllib.load(f)


def load_targets(path=TARGETS):
    """The list of targets, each checked for its fields."""
    targets = load_toml(path).get("target", [])
    for i, t in enumerate(targets):
        where = f"{path}, target {i + 1}"
        missing = [k for k in ("row", "metric", "op", "threshold") if k not in t]
        if missing:
            raise ValueError(f"{where} has no {', '.join(missing)}")
        if t["op"] not in OPS:
            raise ValueError(f"{where}: op {t['op']!r} is none of {', '.join(OPS)}")
        if not isinstance(t["threshold"], (int, float)) or isinstance(t["threshold"], bool):
            raise ValueError(f"{where}: threshold {t['threshold']!r} is not a number")
        parse_metric(t["metric"])
    return targets


def section_of(row_id):
    head = row_id.split(".", 1)[0]
    return head if head in ("sim", "multi") else "gpu"


def parse_metric(metric):
    """(numerator names, operator or None, reference names)."""
    parts = re.split(r"\s+([/-])\s+", metric.strip())
    if len(parts) not in (1, 3) or not all(p.strip() for p in parts[::2]):
        raise ValueError(f"metric {metric!r}: expected 'a', 'a / b' or 'a - b'")
    names = [split_names(side) for side in parts[::2]]
    if len(parts) == 1:
        return names[0], None, []
    return names[0], parts[1], names[1]


def split_names(side):
    """'a, b[1, 2]' -> ['a', 'b[1, 2]']: commas inside brackets belong to a name."""
    names, depth, start = [], 0, 0
    for i, ch in enumerate(side):
        depth += (ch in "([{") - (ch in ")]}")
        if ch == "," and depth == 0:
            names.append(side[start:i].strip())
            start = i + 1
    return names + [side[start:].strip()]


def figures(row, names):
    """The figures of `row` that `names` name: (present values, names absent)."""
    values, refs = row.get("values", {}), row.get("refs", {})
    found, absent = [], []
    for name in names:
        if name.endswith("*"):
            prefix = name[:-1]
            xs = [v for k, v in values.items() if k.startswith(prefix) and v is not None]
        else:
            v = values[name] if name in values else refs.get(name)
            xs = [] if v is None else [v]
        found += xs
        if not xs:
            absent.append(name)
    return found, absent


def evaluate(target, row):
    """(metric value or None, why it is None)."""
    num_names, op, ref_names = parse_metric(target["metric"])
    nums, absent = figures(row, num_names)
    refs, absent_refs = figures(row, ref_names) if op else ([], [])
    if not nums or (op and not refs):
        gone = (absent if not nums else []) + (absent_refs if op and not refs else [])
        return None, f"{', '.join(gone)} absent"
    higher = target["op"] in (">=", ">")
    x = min(nums) if higher else max(nums)
    if op is None:
        return x, ""
    ref = max(refs) if higher else min(refs)
    if op == "/":
        return (x / ref, "") if ref else (None, "division by zero")
    return x - ref, ""


def describe(target, unit=""):
    """The target as the table says it: 'pygpu k(d) <= 1.1x raw C 2 args'."""
    num, op, ref = parse_metric(target["metric"])
    thr = f"{target['threshold']:g}"
    if op == "/":
        return f"{', '.join(num)} {target['op']} {thr}x {', '.join(ref)}"
    if op == "-":
        return f"{', '.join(num)} {target['op']} {', '.join(ref)} + {thr} {unit}".rstrip()
    return f"{', '.join(num)} {target['op']} {thr} {unit}".rstrip()


def measured(target, value, unit=""):
    """The metric's value as the table says it: '1.05x', '+7 ms', '0.26 s'."""
    _, op, _ = parse_metric(target["metric"])
    if op == "/":
        return f"{value:.0f}x" if abs(value) >= 100 else f"{value:.2f}x"
    if op == "-":
        return f"{value:+.3g} {unit}".rstrip()
    return f"{value:.3g} {unit}".rstrip()


def judge(targets, results):
    """One outcome per target: dict(target, status, value, text), status being
    'met', 'missed' or 'not run'."""
    rows = {r.get("id"): r for r in results.get("rows", []) if r.get("id")}
    sections = set(results.get("sections", []))
    outcomes = []
    for t in targets:
        row = rows.get(t["row"])
        out = dict(target=t, value=None)
        if section_of(t["row"]) not in sections:
            out.update(status="not run",
                       text=f"part '{section_of(t['row'])}' of the benchmark did not run")
        elif row is None and "partial" in sections:
            out.update(status="not run", text="the run stopped before this row")
        elif row is None:
            out.update(status="missed", text="row missing from the results")
        else:
            value, why = evaluate(t, row)
            unit = row.get("unit", "")
            if value is None and t.get("absent") == "not run":
                # a figure that needs a tool the machine may lack (clang++)
                out.update(status="not run", text=f"not measured here: {why}")
            elif value is None:
                out.update(status="missed", text=f"not measured: {why}")
            else:
                met = OPS[t["op"]](value, t["threshold"])
                out.update(status="met" if met else "missed", value=value,
                           text=measured(t, value, unit))
        outcomes.append(out)
    return outcomes


def check(results_path=None, targets_path=TARGETS, out=sys.stdout):
    """Print the judgement of a run's results; 0 when every target of the parts
    that ran is met, 1 when one is missed, 2 when there is nothing to judge."""
    path = Path(results_path or LATEST)
    try:
        results = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        print(f"cannot read the results {path}: {exc}", file=out)
        return 2
    if results.get("smoke"):
        print(f"{path} is a smoke run (tiny sizes): its figures mean nothing; "
              "no target judged", file=out)
        return 2
    targets = load_targets(targets_path)
    outcomes = judge(targets, results)
    count = {s: sum(o["status"] == s for o in outcomes) for s in ("met", "missed", "not run")}
    print(f"{path}: {results.get('device', '?')}, {results.get('date', '?')}, commit "
          f"{results.get('commit', '?')}; parts run: {', '.join(results.get('sections', []))}",
          file=out)
    rows = {r.get("id"): r for r in results.get("rows", [])}
    for o in outcomes:
        if o["status"] == "not run":
            continue
        t = o["target"]
        unit = rows.get(t["row"], {}).get("unit", "")
        absolute = parse_metric(t["metric"])[1] is None
        note = f"  [{t['note']}]" if t.get("note") and o["status"] == "missed" else ""
        print(f"{'met   ' if o['status'] == 'met' else 'MISSED'} {t['row']}: {t['metric']} = "
              f"{o['text']} (target {t['op']} {t['threshold']:g}{' ' + unit if absolute else ''})"
              f"{note}", file=out)
    parts = {}
    for o in outcomes:
        if o["status"] == "not run":
            part = section_of(o["target"]["row"])
            parts[part] = parts.get(part, 0) + 1
    print(f"{count['met']} met, {count['missed']} missed of {len(outcomes)} targets in "
          f"{Path(targets_path).name}" + (", not run: " + ", ".join(
              f"{n} of part '{p}'" for p, n in parts.items()) if parts else ""), file=out)
    return 1 if count["missed"] else 0
