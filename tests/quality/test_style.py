"""House style, checked by the suite so that CI fails on drift: clang-format
for C, ruff for Python, and a C build free of -Wall -Wextra
-Wmissing-prototypes warnings."""

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest
from conftest import CSRC_INCLUDES, ROOT

CSRC = ROOT / "csrc"
C_FILES = sorted(p for p in CSRC.rglob("*") if p.suffix in (".c", ".h", ".cu"))


def tool(name):
    """A tool from the test extras: beside this interpreter, else on PATH."""
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]' brings it)")
    return found


def test_c_sources_are_clang_formatted():
    # every folder of csrc/ is read, not only its top
    assert {p.parent for p in C_FILES} == {d for d in CSRC.iterdir() if d.is_dir()}
    r = subprocess.run([tool("clang-format"), "--dry-run", "--Werror", *map(str, C_FILES)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, "run clang-format -i on csrc/:\n" + r.stderr[-3000:]


def test_python_is_ruff_clean():
    r = subprocess.run([tool("ruff"), "check", "--output-format", "concise", "."],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


@pytest.mark.parametrize("source", [str(p.relative_to(CSRC)) for p in C_FILES
                                    if p.suffix == ".c"])
def test_c_compiles_without_warnings(source):
    cc = sysconfig.get_config_var("CC").split()[0] or "cc"
    flags = ["-std=c11", "-fsyntax-only", "-Wall", "-Wextra", "-Wmissing-prototypes",
             "-Wno-missing-field-initializers", "-Werror",
             *(f"-I{d}" for d in CSRC_INCLUDES), f"-I{np.get_include()}",
             f"-I{sysconfig.get_paths()['include']}"]
    if source == "runtime/rt_cuda.c":
        cuda = Path("/usr/local/cuda/include")
        if not (cuda / "cuda_runtime.h").exists():
            pytest.skip("no CUDA toolkit headers")
        flags += [f"-I{cuda}", "-DPG_HAVE_CUDA=1"]
    r = subprocess.run([cc, *flags, str(CSRC / source)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]


def test_device_headers_make_no_infinity_by_dividing_by_zero():
    """1.0 / 0.0 is undefined behaviour in C++, and NVRTC's front end takes it
    so: with pg::inf() written that way, complex64 max(axis=0) lost every load
    on an H200 and answered the identity. The headers make infinities and
    NaNs from their bits."""
    import re

    division = re.compile(r"\b\d+(\.\d*)?f?\s*/\s*0(\.0*)?f?\b")
    comment = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
    found = []
    for path in sorted((ROOT / "pygpu" / "include" / "pygpu").glob("*.h")):
        # comments blanked, their newlines kept (the line numbers stay)
        code = comment.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), path.read_text())
        found += [f"{path.name}:{n}: {line.strip()}"
                  for n, line in enumerate(code.splitlines(), 1) if division.search(line)]
    assert not found, "\n".join(found)
