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
        "With no GPU, the same source runs on pygpu's simulator: the host C++ "
        "compiler builds it against a prelude of the CUDA dialect, and the "
        "simulator runs its threads (notebook 04 shows what else it can tell "
        "you about a kernel)."),
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

DEBUGGING = [
    new_markdown_cell(
        "# Debugging your kernels on the simulator\n\n"
        "Three kernels with a learner's bugs: an off-by-one, a missing "
        "`__syncthreads()`, and a race between threads. On a GPU each one gives "
        "wrong numbers some of the time, or none of the time, and no message. "
        "pygpu's simulator runs the same CUDA C on the CPU and, in its *checking "
        "mode*, stops at the bug and says which kernel, block and thread, and "
        "what it touched. Then the fixed versions.\n\n"
        "The checking mode needs `clang++`; this notebook runs on the simulator "
        "even on a machine with a GPU."),
    new_code_cell(
        "import os\n"
        "os.environ['PYGPU_SIMULATOR'] = '1'   # before the first pygpu operation\n"
        "import shutil\n"
        "import numpy as np\n"
        "import pygpu\n"
        "from pygpu import cuda\n\n"
        "assert cuda.is_simulator()\n"
        "check = shutil.which('clang++') is not None\n"
        "print('checking mode available:', check)\n\n"
        "def run(kernel, *args, config):\n"
        "    try:\n"
        "        kernel[config](*args)\n"
        "        print('ran without complaint')\n"
        "    except pygpu.KernelError as e:\n"
        "        print(type(e).__name__ + ':', e)"),
    new_markdown_cell(
        "## 1. Off by one\n\n"
        "`if (i <= n)` lets thread `n` write one element past the end. On a GPU "
        "the write usually lands in memory nobody looks at, so the result looks "
        "right. The checking mode names the argument and the byte offset:"),
    new_code_cell(
        "source = r\'\'\'\n"
        "extern \"C\" __global__ void scale(float *x, float a, int n)\n"
        "{\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i <= n)          // bug: one too many\n"
        "        x[i] *= a;\n"
        "}\n"
        "\'\'\'\n"
        "x = cuda.to_device(np.arange(1000, dtype=np.float32))\n"
        "if check:\n"
        "    run(pygpu.RawKernel(source, 'scale', check=True), x, np.float32(2), np.int32(1000),\n"
        "        config=(4, 256))\n"
        "x = cuda.to_device(np.arange(1000, dtype=np.float32))   # afresh: the failed run wrote some\n"
        "fixed = pygpu.RawKernel(source.replace('i <= n', 'i < n'), 'scale', check=check)\n"
        "run(fixed, x, np.float32(2), np.int32(1000), config=(4, 256))\n"
        "assert np.array_equal(x.copy_to_host(), 2 * np.arange(1000, dtype=np.float32))"),
    new_markdown_cell(
        "## 2. A missing `__syncthreads()`\n\n"
        "Each thread stores its element in shared memory and reads its mirror "
        "image. Without a barrier between the two, a thread can read before "
        "the other has written. The checking mode sees two threads touch one "
        "shared address between the same two barriers, one of them writing:"),
    new_code_cell(
        "source = r\'\'\'\n"
        "extern \"C\" __global__ void reverse(float *x)\n"
        "{\n"
        "    __shared__ float tile[256];\n"
        "    int t = threadIdx.x;\n"
        "    tile[t] = x[t];\n"
        "    // bug: __syncthreads() missing here\n"
        "    x[t] = tile[blockDim.x - 1 - t];\n"
        "}\n"
        "\'\'\'\n"
        "x = cuda.to_device(np.arange(256, dtype=np.float32))\n"
        "if check:\n"
        "    run(pygpu.RawKernel(source, 'reverse', check=True), x, config=(1, 256))\n"
        "x = cuda.to_device(np.arange(256, dtype=np.float32))\n"
        "fixed = pygpu.RawKernel(source.replace('// bug: __syncthreads() missing here',\n"
        "                                       '__syncthreads();'), 'reverse', check=check)\n"
        "run(fixed, x, config=(1, 256))\n"
        "assert np.array_equal(x.copy_to_host(), np.arange(256, dtype=np.float32)[::-1])"),
    new_markdown_cell(
        "## 3. A race on a counter\n\n"
        "Every thread adds one to a counter by reading it and writing it back: "
        "another thread can come in between. Run one thread after another, the "
        "count would come out right and hide the bug; here a barrier between "
        "the read and the write lets every thread read first, as on a GPU they "
        "may. (A *shuffled schedule*, `cuda.simulator_schedule(seed)`, likewise "
        "runs threads in another order between barriers, so that a result that "
        "hangs on the order changes from seed to seed; pygpu's test suite runs "
        "that way.) `atomicAdd` is the fix:"),
    new_code_cell(
        "source = r\'\'\'\n"
        "extern \"C\" __global__ void count(int *counter)\n"
        "{\n"
        "    int seen = *counter;     // bug: read, then write back, not atomic\n"
        "    __syncthreads();\n"
        "    *counter = seen + 1;\n"
        "}\n"
        "extern \"C\" __global__ void count_atomic(int *counter)\n"
        "{\n"
        "    atomicAdd(counter, 1);\n"
        "}\n"
        "\'\'\'\n"
        "module = pygpu.RawModule(source)\n"
        "previous = cuda.simulator_schedule(1234)\n"
        "for name in ['count', 'count_atomic']:\n"
        "    counter = pygpu.zeros(1, np.int32)\n"
        "    module.get_function(name)[1, 128](counter)\n"
        "    print(f'{name} counted {counter.copy_to_host()[0]} of 128 threads')\n"
        "cuda.simulator_schedule(previous)"),
    new_markdown_cell(
        "## And what the simulator always catches\n\n"
        "Even without the checking mode, a barrier that only part of a block "
        "reaches, or a warp shuffle whose mask names a lane that has exited, "
        "would hang a GPU. The simulator stops and says who waits where. "
        "A device `assert` raises `pygpu.KernelAssertionError` (an "
        "`AssertionError`) with the file and line, and `printf` output lands in "
        "this cell:"),
    new_code_cell(
        "source = r\'\'\'\n"
        "#include <assert.h>\n"
        "extern \"C\" __global__ void sum_warp(const float *x, float *out, int n)\n"
        "{\n"
        "    int i = threadIdx.x;\n"
        "    if (i >= n) return;                  // bug: lanes leave the warp early\n"
        "    float v = x[i];\n"
        "    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);\n"
        "    if (i == 0) *out = v;\n"
        "}\n"
        "extern \"C\" __global__ void checked(int *x, int n)\n"
        "{\n"
        "    printf(\"thread %d sees n = %d\\\\n\", threadIdx.x, n);\n"
        "    assert(threadIdx.x < n);\n"
        "}\n"
        "\'\'\'\n"
        "module = pygpu.RawModule(source)\n"
        "run(module.get_function('sum_warp'), cuda.to_device(np.ones(32, np.float32)),\n"
        "    pygpu.zeros(1, np.float32), np.int32(20), config=(1, 32))\n"
        "cuda.simulator_schedule(None)\n"
        "run(module.get_function('checked'), pygpu.zeros(1, np.int32), np.int32(2), config=(1, 3))"),
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
    write("04_debugging_kernels.ipynb", DEBUGGING)
