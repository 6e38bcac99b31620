"""docs/SCALING.md's examples run as written: the Dask one everywhere (on the
simulator, a worker per simulated device), the NCCL all-reduce in two
processes on a machine with two GPUs; and the scaling benchmark's smoke mode."""

import os
import re
import socket
import subprocess
import sys

import pytest
from conftest import ROOT

from pygpu import cuda

DOC = (ROOT / "docs" / "SCALING.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", DOC, flags=re.S)
GPUS = 0 if cuda.is_simulator() else len(cuda.gpus)


def block(first_line):
    found = [b for b in BLOCKS if b.splitlines()[0].startswith(first_line)]
    assert len(found) == 1, f"docs/SCALING.md has no single example starting {first_line!r}"
    return found[0]


def test_dask_example_runs_as_written(tmp_path):
    pytest.importorskip("distributed")
    script = tmp_path / "dask_example.py"
    script.write_text(block("import numpy as np"))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=300, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split() == ["True", "True"], r.stdout + r.stderr[-2000:]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_nccl_all_reduce_example_runs_in_two_processes(tmp_path):
    if GPUS < 2:
        pytest.skip(f"the NCCL all-reduce needs two GPUs; this machine has {GPUS}")
    torch = pytest.importorskip("torch")
    import torch.distributed as dist

    if not (torch.cuda.is_available() and dist.is_available() and dist.is_nccl_available()):
        pytest.skip("this PyTorch has no CUDA or no NCCL")
    script = tmp_path / "allreduce.py"
    script.write_text(block("# allreduce.py"))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WORLD_SIZE": "2",
           "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(_free_port()),
           # NVLink multicast stays off (it can take a shared host's GPUs down)
           "NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
           "NVSHMEM_DISABLE_NVLS": "1"}
    procs = [subprocess.Popen([sys.executable, str(script)], cwd=ROOT, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env={**env, "RANK": str(r), "LOCAL_RANK": str(r)})
             for r in range(2)]
    outs = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
        assert p.returncode == 0, err[-3000:]
        outs.append(out)
    for r, out in enumerate(outs):
        assert f"rank {r}: all-reduce" in out and "zero-copy" in out, out
        assert out.rstrip().endswith("ok"), out


def test_scaling_benchmark_smoke_mode_prints_the_table(tmp_path):
    pytest.importorskip("distributed")
    out = tmp_path / "scaling.json"
    r = subprocess.run([sys.executable, "-m", "benchmarks.scaling", "--smoke",
                        "--json", str(out)], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "| GPUs | chunks | GB in | wall s | host->device s | compute s | device->host s" \
        in r.stdout
    assert re.search(r"^\| 1 \| 8 \|.*\| 1\.00x \|", r.stdout, flags=re.M), r.stdout
    assert re.search(r"^\| 2 \| 8 \|", r.stdout, flags=re.M), r.stdout
    assert '"max_rel_error"' in out.read_text()
