"""The notebooks and the README's examples run as written."""

import importlib.util
import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_top_to_bottom(path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(ROOT)}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    if path.name.startswith("01"):
        assert "block has 2048 threads" in text
        assert "copy_to_host" in text
    elif path.name.startswith("03"):
        assert "saxpy matches NumPy" in text
        assert "sum" in text and "NumPy" in text and "block 0 adds" in text
        assert "'version': 3" in text
    elif path.name.startswith("04"):
        if shutil.which("clang++"):
            assert "out of bounds" in text and "shared-memory race" in text
        assert "count_atomic counted 128 of 128 threads" in text
        assert "which names lane 20" in text
        assert "thread 0 sees n = 2" in text and "KernelAssertionError" in text
    elif path.name.startswith("05"):
        for name in ("add_one", "matmul", "fast_matmul", "histogram", "block_sum"):
            assert f"{name:12s} matches NumPy" in text
        assert "#line 9 " in text  # inspect_cuda: the Python line of `A[row, col] += 1`
        if shutil.which("clang++") and "no GPU" in text:  # check=True, on the simulator
            assert re.search(r"kernel 'scale', block \(3, 0, 0\), thread \(232, 0, 0\), "
                             r"\S+\.py:5: index 1000 is out of bounds for axis 0 with size "
                             r"1000 \(array 'x'\)",
                             text)
        assert re.search(r"KernelAssertionError: kernel 'normalise', block \(0, 0, 0\), "
                         r"thread \(\d+, 0, 0\), \S+\.py:5: assert total > 0 failed: the "
                         "total must be positive", text)
        assert "no GPU" in text or "fast_matmul" in text.split("CUDA C ms")[-1]
    else:
        assert "relative error" in text
        assert any("image/png" in o.get("data", {}) for o in outputs)


def test_notebooks_exist():
    names = [p.name for p in NOTEBOOKS]
    assert "01_getting_started.ipynb" in names
    assert "02_matmul_naive_vs_shared.ipynb" in names
    assert "03_your_own_kernels.ipynb" in names
    assert "04_debugging_kernels.ipynb" in names
    assert "05_kernels_in_python.ipynb" in names


def test_readme_python_examples_run(tmp_path):
    # each block as a script of its own, as a reader saves it (cuda.jit reads
    # a kernel's source, which `python -c` does not keep)
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks
    for i, code in enumerate(blocks):
        if "import sklearn" in code and importlib.util.find_spec("sklearn") is None:
            continue  # the scikit-learn example: pip install -e ".[test-sklearn]"
        script = tmp_path / f"example{i}.py"
        script.write_text(code)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           timeout=300, cwd=ROOT, env=env)
        assert r.returncode == 0, r.stderr
        assert "True" in r.stdout
