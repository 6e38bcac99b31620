"""The benchmark command cannot rot: its smoke mode runs in the test suite."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_benchmark_smoke_mode_prints_the_table(tmp_path):
    out = tmp_path / "bench.json"
    r = subprocess.run([sys.executable, "-m", "benchmarks", "--smoke", "--json", str(out)],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    for measure in ("launch, host time per call", "vector add", "add one in place",
                    "matmul", "host to device, pageable", "allocate + free", "import"):
        assert measure in r.stdout
    assert "| measure | size | unit | pygpu | raw C | CuPy | Numba | PyTorch | NumPy |" in r.stdout
    assert out.exists() and '"rows"' in out.read_text()
