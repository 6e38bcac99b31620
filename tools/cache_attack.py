"""Issue 26's steps, run as a new user would, on this machine's backend:

1. compile a RawKernel once, so that its image is in the cache;
2. copy that cache to a directory anyone can write (mode 0777), as a shared
   CI cache often is;
3. replace the image with a planted one (on the simulator, a shared object
   whose constructor writes a marker file; on a GPU, the cubin of another
   kernel, which writes 42 everywhere), with a valid trailer, so that only
   the ownership and permission checks stand in its way;
4. in a new process, build the same RawKernel and run it.

Then the same with a private directory and a planted file of mode 0666.
Prints what happened at each step; exit status 0 when the planted code never
ran and the kernel gave the right answer both times.

    python tools/cache_attack.py            # the GPU when there is one
    PYGPU_SIMULATOR=1 python tools/cache_attack.py
"""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

SCALE = r"""
extern "C" __global__ void scale(float *x, float a, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
"""
EVIL = r"""
extern "C" __global__ void scale(float *x, float a, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 42.0f;
}
"""
CHILD = textwrap.dedent(f"""
    import numpy as np, pygpu
    k = pygpu.RawKernel({SCALE!r}, "scale")
    d = pygpu.asarray(np.arange(5, dtype=np.float32))
    k[1, 32](d, np.float32(3), d.size)
    print(d.copy_to_host().tolist())
""")
RIGHT = "[0.0, 3.0, 6.0, 9.0, 12.0]"


def child(cache):
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                       env=dict(os.environ, PYGPU_CACHE_DIR=str(cache)), timeout=300)
    return r.returncode, r.stdout.strip(), r.stderr.strip()


def planted_image(tmp, marker):
    from pygpu import _cache, _core, rawkernel

    if _core._host_modules():
        src = tmp / "planted.c"
        src.write_text('#include <stdio.h>\n__attribute__((constructor)) static void p(void)'
                       f'{{ FILE *f = fopen("{marker}", "w"); if (f) fclose(f); }}\n')
        so = tmp / "planted.so"
        subprocess.run(["gcc", "-shared", "-fPIC", str(src), "-o", str(so)], check=True)
        image = so.read_bytes()
    else:
        image = rawkernel.compile_cuda(EVIL)[0]
    return image + _cache._TRAILER.pack(_cache._MAGIC, hashlib.sha256(image).digest(),
                                        len(image))


def attack(tmp, name, prepare):
    marker = tmp / f"marker-{name}"
    cache = tmp / f"{name}-first"
    code, out, err = child(cache)
    print(f"[{name}] 1. first compile into {cache}: {out} (exit {code})")
    entry = next(p for p in cache.iterdir() if p.suffix in (".so", ".cubin"))
    target = prepare(tmp, cache, name)
    victim = target / entry.name
    victim.write_bytes(planted_image(tmp, marker))
    if name == "file":
        os.chmod(victim, 0o666)
    print(f"[{name}] 2-3. cache at {target} (mode {os.stat(target).st_mode & 0o7777:04o}), "
          f"{entry.name} replaced (mode {os.stat(victim).st_mode & 0o7777:04o})")
    code, out, err = child(target)
    warned = [line for line in err.splitlines() if "UnsafeCacheWarning" in line]
    ran = marker.exists()
    print(f"[{name}] 4. new process: result {out} (exit {code}); planted code ran: {ran}")
    for line in warned:
        print(f"[{name}]    {line.strip()}")
    return code == 0 and out == RIGHT and not ran and bool(warned)


def shared_0777(tmp, cache, name):
    shared = tmp / f"{name}-shared"
    shutil.copytree(cache, shared)
    os.chmod(shared, 0o777)
    return shared


def private_dir(tmp, cache, name):
    return cache


def main():
    import pygpu

    print(f"backend: {'simulator' if pygpu._core._host_modules() else 'GPU'}")
    with tempfile.TemporaryDirectory(prefix="pygpu-attack-") as t:
        tmp = Path(t)
        ok = attack(tmp, "dir", shared_0777) & attack(tmp, "file", private_dir)
    print("the planted code never ran; the kernel gave the right answer" if ok
          else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
