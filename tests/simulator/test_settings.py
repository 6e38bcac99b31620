"""The simulator's environment variables are understood or refused: a bad
PYGPU_SIM_MEMORY or PYGPU_SIM_DEVICES is a ValueError at the first operation
that asks for a device (cuda.is_available() included), naming the variable,
the value and what is accepted. The backend is chosen once per process, so
each case runs in a fresh interpreter."""

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.simulator


def run_python(code, **env_changes):
    env = dict(os.environ, PYGPU_SIMULATOR="1", PYTHONPATH=os.pathsep.join(sys.path))
    env.pop("PYGPU_SIM_MEMORY", None)
    env.pop("PYGPU_SIM_DEVICES", None)
    env.update(env_changes)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=120)


# One process tries every bad value in turn: a refused setting commits nothing,
# so the next operation checks again.
REFUSALS = """
    import os, pygpu
    from pygpu import cuda
    var, values = %r, %r
    for v in values:
        os.environ[var] = v
        for op in (lambda: pygpu.zeros(1), cuda.is_available, lambda: cuda.gpus[0]):
            try:
                op()
            except ValueError as e:
                msg = str(e)
                assert var in msg and repr(v) in msg, msg
                assert "e.g." in msg or "from 1 to 64" in msg, msg
            else:
                raise AssertionError(f"{var}={v!r} was accepted")
    print("ok")
"""


def test_bad_memory_sizes_are_refused():
    bad = ["1X", "99999999999999999999", "lots", "-5", "+5", "0", "0K", "1.5.5G", "G",
           "1 2G", "1e9", "16384P", "18446744073709551616", "20000000T", "0x100", "1GiBs"]
    r = run_python(REFUSALS % ("PYGPU_SIM_MEMORY", bad))
    assert r.returncode == 0 and r.stdout.split() == ["ok"], r.stderr[-3000:]


def test_bad_device_counts_are_refused():
    bad = ["0", "-1", "abc", "100000", "65", "1.5", "2 devices", "99999999999999999999"]
    r = run_python(REFUSALS % ("PYGPU_SIM_DEVICES", bad))
    assert r.returncode == 0 and r.stdout.split() == ["ok"], r.stderr[-3000:]


@pytest.mark.parametrize("value, size", [
    ("1T", 1 << 40), ("1t", 1 << 40), ("512MiB", 512 << 20), ("512mib", 512 << 20),
    ("1.5G", 3 << 29), ("2GB", 2 << 30), ("64k", 64 << 10), ("3Ki", 3 << 10),
    ("4096", 4096), ("100B", 100), (" 2 GiB ", 2 << 30), (".5M", 1 << 19),
    ("", 4 << 30),
])
def test_memory_sizes_in_bytes_or_with_a_binary_unit(value, size):
    r = run_python("""
        import pygpu
        print(pygpu.cuda.get_current_device().total_memory)
    """, PYGPU_SIM_MEMORY=value)
    assert r.returncode == 0, r.stderr[-3000:]
    assert int(r.stdout) == size


@pytest.mark.parametrize("value, count", [("1", 1), ("3", 3), (" 2 ", 2), ("64", 64),
                                          ("", 1)])
def test_device_counts_from_1_to_64(value, count):
    r = run_python("""
        import pygpu
        print(len(pygpu.cuda.gpus), pygpu.cuda.is_available())
    """, PYGPU_SIM_DEVICES=value)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split() == [str(count), "True"]
