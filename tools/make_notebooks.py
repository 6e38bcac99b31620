"""Writes the notebooks in notebooks/ from the cells below (run after editing)."""

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent.parent / "notebooks"

GETTING_STARTED = [
    new_markdown_cell(
        "# Getting started with pygpu\n\n"
        "This notebook finds the GPU, copies an array to it, runs a kernel that "
        "adds one to every element, and copies the result back. Then it makes the "
        "mistakes beginners make, to show what pygpu says about each.\n\n"
        "No GPU? Run Jupyter with `PYGPU_SIMULATOR=1` set, or let the next cell "
        "switch to pygpu's CPU simulator: the same kernels then run on the CPU."),
    new_code_cell(
        "import os\n"
        "import numpy as np\n"
        "import pygpu\n"
        "from pygpu import cuda\n\n"
        "if not cuda.is_available():\n"
        "    print('No GPU here: using the CPU simulator')\n"
        "    os.environ['PYGPU_SIMULATOR'] = '1'\n"
        "cuda.detect()"),
    new_markdown_cell("## A device and its limits"),
    new_code_cell(
        "dev = cuda.gpus[0]\n"
        "print(dev.name, 'compute capability', dev.compute_capability)\n"
        "print('max threads per block:', dev.max_threads_per_block)\n"
        "print('free / total memory (GiB): %.2f / %.2f' % tuple(x / 2**30 for x in dev.mem_info()))"),
    new_markdown_cell(
        "## Host to device, a kernel, device to host\n\n"
        "`cuda.to_device` copies a NumPy array to device memory. The kernel is "
        "launched as `kernel[blocks_per_grid, threads_per_block](args)`; "
        "`cuda.launch_config` picks blocks that cover the array, with x on the "
        "last (contiguous) axis."),
    new_code_cell(
        "A = np.arange(12, dtype=np.float32).reshape(3, 4)\n"
        "d_A = cuda.to_device(A)\n"
        "print(d_A)\n"
        "blocks, threads = cuda.launch_config(A.shape, (16, 16))\n"
        "print('blocks', blocks, 'threads', threads)\n"
        "pygpu.kernels.add_one[blocks, threads](d_A)\n"
        "result = d_A.copy_to_host()\n"
        "print(result)\n"
        "assert np.array_equal(result, A + 1)"),
    new_markdown_cell(
        "Any configuration gives the whole answer (the kernels loop over what the "
        "threads do not cover); the configuration changes only the speed:"),
    new_code_cell(
        "d_B = cuda.to_device(A)\n"
        "pygpu.kernels.add_one[1, 4](d_B)   # one block of 4 threads for 12 elements\n"
        "assert np.array_equal(d_B.copy_to_host(), A + 1)\n"
        "(d_B + d_B).copy_to_host()"),
    new_markdown_cell("## Mistakes, and what pygpu says"),
    new_code_cell(
        "def show(f):\n"
        "    try:\n"
        "        f()\n"
        "    except Exception as e:\n"
        "        print(f'{type(e).__name__}: {e}')\n\n"
        "show(lambda: pygpu.kernels.add_one[1, 2048](d_A))              # too many threads\n"
        "show(lambda: pygpu.kernels.add_one[0, 32](d_A))                # empty grid\n"
        "show(lambda: pygpu.kernels.add_one[len(A) / 16, 16](d_A))      # a float block count\n"
        "show(lambda: pygpu.kernels.add_one[1, 32](A))                  # a host array\n"
        "show(lambda: pygpu.kernels.add_one(d_A))                       # no configuration\n"
        "show(lambda: np.asarray(d_A))                                  # implicit copy\n"
        "show(lambda: d_A + cuda.to_device(np.ones(3, np.float32)))     # shapes differ\n"
        "show(lambda: pygpu.kernels.matmul_shared[1, (8, 8)](d_A, d_A.T.copy(), pygpu.empty((3, 3), np.float32)))\n"
        "show(lambda: pygpu.empty(2**62, dtype=np.float64))             # too big"),
]

MATMUL = [
    new_markdown_cell(
        "# Matrix multiply: naive vs shared memory\n\n"
        "`matmul_naive` gives each thread one element of C and reads a row of A "
        "and a column of B from device memory. `matmul_shared` loads 16x16 tiles "
        "of A and B into shared memory once per block, so each value read from "
        "device memory is used 16 times. Both are checked against NumPy, then "
        "timed. On the simulator the timings are CPU timings and mean nothing "
        "about a GPU."),
    new_code_cell(
        "import os, time\n"
        "import numpy as np\n"
        "import pygpu\n"
        "from pygpu import cuda\n\n"
        "if not cuda.is_available():\n"
        "    os.environ['PYGPU_SIMULATOR'] = '1'\n"
        "cuda.detect()\n"
        "sim = cuda.is_simulator()\n"
        "rng = np.random.default_rng(1)"),
    new_markdown_cell("## Both kernels against NumPy, on sizes that are not multiples of 16"),
    new_code_cell(
        "for m, k, n in [(1, 1, 1), (17, 33, 5), (100, 37, 64)]:\n"
        "    A = rng.standard_normal((m, k)).astype(np.float32)\n"
        "    B = rng.standard_normal((k, n)).astype(np.float32)\n"
        "    ref = A.astype(np.float64) @ B\n"
        "    dA, dB = cuda.to_device(A), cuda.to_device(B)\n"
        "    for name in ('matmul_naive', 'matmul_shared'):\n"
        "        C = pygpu.empty((m, n), np.float32)\n"
        "        grid, block = cuda.launch_config((m, n), (16, 16))\n"
        "        getattr(pygpu.kernels, name)[grid, block](dA, dB, C)\n"
        "        err = np.linalg.norm(C.copy_to_host() - ref) / np.linalg.norm(ref)\n"
        "        print(f'{name:14s} {m}x{k} @ {k}x{n}: relative error {err:.1e}')\n"
        "        assert err < 1e-5"),
    new_markdown_cell("## Timing"),
    new_code_cell(
        "sizes = [16, 32, 48, 64] if sim else [256, 512, 1024, 2048]\n"
        "times = {'naive': [], 'shared': []}\n"
        "for s in sizes:\n"
        "    dA = cuda.to_device(rng.standard_normal((s, s)).astype(np.float32))\n"
        "    dB = cuda.to_device(rng.standard_normal((s, s)).astype(np.float32))\n"
        "    C = pygpu.empty((s, s), np.float32)\n"
        "    for method in times:\n"
        "        pygpu.matmul(dA, dB, method=method, out=C)\n"
        "        cuda.synchronize()\n"
        "        best = float('inf')\n"
        "        for _ in range(3):\n"
        "            t0 = time.perf_counter()\n"
        "            pygpu.matmul(dA, dB, method=method, out=C)\n"
        "            cuda.synchronize()\n"
        "            best = min(best, time.perf_counter() - t0)\n"
        "        times[method].append(best)\n"
        "    print(s, {m: f'{t[-1] * 1e3:.3f} ms' for m, t in times.items()})"),
    new_code_cell(
        "%matplotlib inline\n"
        "import matplotlib.pyplot as plt\n"
        "fig, ax = plt.subplots(figsize=(6, 4))\n"
        "for method, t in times.items():\n"
        "    ax.plot(sizes, [2 * s**3 / x / 1e9 for s, x in zip(sizes, t)], 'o-', label=method)\n"
        "ax.set_xlabel('n (n x n @ n x n, float32)')\n"
        "ax.set_ylabel('GFLOP/s')\n"
        "ax.set_title(('simulator (CPU)' if sim else cuda.gpus[0].name) + ': matmul')\n"
        "ax.legend()\n"
        "plt.show()"),
]


OWN_KERNELS = [
    new_markdown_cell(
        "# Your own kernels, and other libraries' arrays\n\n"
        "`pygpu.RawKernel` compiles CUDA C at run time with NVRTC and launches it "
        "with the same `kernel[grid, block](args)` syntax as pygpu's prebuilt "
        "kernels. Every argument is checked against the compiled kernel's "
        "parameters: a Python `float` is a C `double`, so a `float` parameter "
        "needs `np.float32(x)`.\n\n"
        "On the simulator (no GPU), compiling works where NVRTC is installed, but "
        "launching needs a real GPU; this notebook says so and carries on."),
    new_code_cell(
        "import os\n"
        "import numpy as np\n"
        "import pygpu\n"
        "from pygpu import cuda\n\n"
        "if not cuda.is_available():\n"
        "    os.environ['PYGPU_SIMULATOR'] = '1'\n"
        "cuda.detect()\n"
        "sim = cuda.is_simulator()"),
    new_code_cell(
        "source = r\'\'\'\n"
        "extern \"C\" __global__ void saxpy(float a, const float *x, float *y, long long n)\n"
        "{\n"
        "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    for (; i < n; i += (long long)gridDim.x * blockDim.x)\n"
        "        y[i] = a * x[i] + y[i];\n"
        "}\n"
        "\'\'\'\n"
        "x = np.random.default_rng(0).standard_normal(10_000).astype(np.float32)\n"
        "y = np.ones_like(x)\n"
        "saxpy = pygpu.RawKernel(source, 'saxpy')\n"
        "print('parameter sizes:', saxpy.param_sizes)\n"
        "dx, dy = cuda.to_device(x), cuda.to_device(y)\n"
        "saxpy[40, 256](np.float32(2.0), dx, dy, x.size)\n"
        "assert np.allclose(dy.copy_to_host(), 2 * x + y)\n"
        "print('saxpy matches NumPy', '(on the simulator)' if sim else '(on the GPU)')"),
    new_markdown_cell(
        "The dialect goes beyond geometry: shared memory and barriers, warp "
        "shuffles, atomics, templates (found by a *name expression*), `printf`. "
        "A block sum with a warp-shuffle reduction:"),
    new_code_cell(
        "module = pygpu.RawModule(r\'\'\'\n"
        "template <typename T>\n"
        "__global__ void block_sums(const T *x, T *out, int n)\n"
        "{\n"
        "    __shared__ T warp_totals[32];\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    T v = i < n ? x[i] : T(0);\n"
        "    for (int offset = 16; offset > 0; offset /= 2)\n"
        "        v += __shfl_down_sync(0xffffffff, v, offset);\n"
        "    if (threadIdx.x % 32 == 0) warp_totals[threadIdx.x / 32] = v;\n"
        "    __syncthreads();\n"
        "    if (threadIdx.x == 0) {\n"
        "        T total = 0;\n"
        "        for (int w = 0; w < blockDim.x / 32; w++) total += warp_totals[w];\n"
        "        atomicAdd(out, total);\n"
        "        if (blockIdx.x == 0) printf(\"block 0 adds %f\\n\", (double)total);\n"
        "    }\n"
        "}\n"
        "\'\'\', name_expressions=['block_sums<float>', 'block_sums<double>'])\n"
        "total = pygpu.zeros(1, np.float64)\n"
        "xd = np.random.default_rng(1).standard_normal(100_000)\n"
        "module.get_function('block_sums<double>')[(xd.size + 255) // 256, 256](\n"
        "    cuda.to_device(xd), total, np.int32(xd.size))\n"
        "cuda.synchronize()\n"
        "print('sum', total.copy_to_host()[0], 'NumPy', xd.sum())"),
    new_markdown_cell(
        "A mistake in the source raises `pygpu.CompileError`, whose `.log` is "
        "the compiler's message (NVRTC's on a GPU, the host compiler's on the "
        "simulator), with the line numbers of your source:"),
    new_code_cell(
        "try:\n"
        "    pygpu.RawKernel('extern \"C\" __global__ void k(int *x)\\n{\\n    oops;\\n}', 'k')\n"
        "except pygpu.CompileError as e:\n"
        "    print(e.log[-600:])"),
    new_markdown_cell(
        "## Arrays shared with other libraries, without copies\n\n"
        "pygpu arrays offer `__cuda_array_interface__` (version 3) and DLPack "
        "(`__dlpack__`, `pygpu.from_dlpack`), so CuPy, PyTorch and Numba use their "
        "memory directly, and `pygpu.asarray` takes theirs. Pickling copies to the "
        "host and back."),
    new_code_cell(
        "d = pygpu.asarray(np.arange(6, dtype=np.float32))\n"
        "print(d.__cuda_array_interface__)\n"
        "view = pygpu.from_dlpack(d)\n"
        "view[0] = 100\n"
        "print(d.copy_to_host(), view.ptr == d.ptr)\n"
        "import pickle\n"
        "print(pickle.loads(pickle.dumps(d)).copy_to_host())\n"
        "try:\n"
        "    import cupy\n"
        "    if not sim:\n"
        "        print('CuPy sees', cupy.asarray(d))\n"
        "except ImportError:\n"
        "    print('CuPy is not installed here')"),
]


def write(name, cells):
    nb = new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}})
    nbformat.write(nb, HERE / name)


if __name__ == "__main__":
    HERE.mkdir(exist_ok=True)
    write("01_getting_started.ipynb", GETTING_STARTED)
    write("02_matmul_naive_vs_shared.ipynb", MATMUL)
    write("03_your_own_kernels.ipynb", OWN_KERNELS)
