"""The simulator's block runner catches the kernel bugs it claims to catch."""

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import CSRC_INCLUDES


def test_block_runner_catches_missing_and_divergent_barriers(tmp_path):
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler to build the simulator self-test")
    exe = tmp_path / "sim_selftest"
    subprocess.run([cxx, "-x", "c++", "-std=c++17", "-O1", *(f"-I{d}" for d in CSRC_INCLUDES),
                    str(Path(__file__).with_name("sim_selftest.cpp")), "-o", str(exe),
                    "-lpthread"],
                   check=True, capture_output=True, text=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("ok:") == 8
