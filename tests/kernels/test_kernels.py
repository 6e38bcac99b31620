"""The prebuilt kernels against NumPy in float64, and every launch mistake."""

import numpy as np
import pytest
from conftest import ON_SIMULATOR, matmul_error, random_array, rel_error

import pygpu
from pygpu import cuda, kernels

KERNEL_DTYPES = [np.float32, np.float64, np.int32, np.int64]
TOL = {np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-14}


def check_close(got, ref, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        np.testing.assert_array_equal(got, ref)
    else:
        assert rel_error(got, ref) <= TOL[dtype]


SHAPES_1D = [1, 2, 31, 33, 255, 257, 1000, 4099, 65537]
SHAPES_2D = [(1, 1), (1, 7), (7, 1), (13, 17), (16, 16), (31, 33), (64, 3), (3, 200),
             (127, 129)]

# Launch configurations as a tutorial would write them, some with the axes
# swapped, some too small (grid-stride loops must still cover everything).
CONFIGS = [None, (1, 1), (1, 32), (3, 64), ((2, 2), (8, 8)), ((1, 1), (32, 32)),
           ((4, 2, 2), (4, 4, 2)), (1000, 1024)]


def config_for(shape, cfg):
    if cfg is None:
        return cuda.launch_config(shape if isinstance(shape, int) else shape,
                                  None if isinstance(shape, int) else (16, 16)[:len(shape)])
    return cfg


@pytest.mark.parametrize("dtype", KERNEL_DTYPES)
@pytest.mark.parametrize("n", SHAPES_1D)
def test_add_vectors(rng, dtype, n):
    a, b = random_array(rng, n, dtype), random_array(rng, n, dtype)
    da, db = cuda.to_device(a), cuda.to_device(b)
    out = pygpu.full(n, 77, dtype=dtype)
    blocks, threads = cuda.launch_config(n, 128)
    kernels.add[blocks, threads](da, db, out)
    check_close(out.copy_to_host(), a.astype(np.float64) + b, dtype)


@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
@pytest.mark.parametrize("shape", [(37, 45), (1, 1), 1000])
def test_add_any_configuration_gives_the_whole_result(rng, cfg, shape):
    a, b = random_array(rng, shape, np.float64), random_array(rng, shape, np.float64)
    out = pygpu.full(shape, np.nan)
    grid, block = config_for(shape, cfg)
    kernels.add[grid, block](cuda.to_device(a), cuda.to_device(b), out)
    np.testing.assert_allclose(out.copy_to_host(), a + b, rtol=1e-15)


def test_add_scalar_in_the_kernel_and_high_level(rng):
    a = random_array(rng, (40, 3), np.float32)
    da = cuda.to_device(a)
    out = pygpu.empty_like(da)
    kernels.add[4, 32](da, 2.5, out)
    check_close(out.copy_to_host(), a.astype(np.float64) + 2.5, np.float32)
    i = random_array(rng, 100, np.int64)
    di = cuda.to_device(i)
    np.testing.assert_array_equal((di + 3).copy_to_host(), i + 3)
    np.testing.assert_array_equal((3 + di).copy_to_host(), i + 3)
    np.testing.assert_array_equal(pygpu.add(di, np.int64(5)).copy_to_host(), i + 5)
    # the operators promote as NumPy does; the raw kernel computes in the
    # arrays' dtype and refuses what it cannot hold
    np.testing.assert_array_equal((di + 0.5).copy_to_host(), i + 0.5)
    np.testing.assert_allclose((da + 1j).copy_to_host(), a + 1j, rtol=1e-6)
    assert (da + 1j).dtype == np.complex64
    with pytest.raises(TypeError, match="fraction"):
        kernels.add[4, 32](di, 0.5, cuda.to_device(i))
    with pytest.raises(TypeError, match="complex"):
        kernels.add[4, 32](da, 1j, out)


@pytest.mark.parametrize("dtype", KERNEL_DTYPES)
@pytest.mark.parametrize("shape", SHAPES_2D + [(5,), (1,), (2, 3, 4)])
def test_add_one_in_place(rng, dtype, shape):
    x = random_array(rng, shape, dtype)
    d = cuda.to_device(x)
    grid, block = cuda.launch_config(shape, (16, 16, 1)[:len(shape)] if len(shape) > 1 else 64)
    kernels.add_one[grid, block](d)
    check_close(d.copy_to_host(), x.astype(np.float64) + 1, dtype)


@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
def test_add_one_tutorial_configs_including_swapped_axes(rng, cfg):
    rows, cols = 70, 45
    x = random_array(rng, (rows, cols), np.float32)
    d = cuda.to_device(x)
    grid, block = config_for((rows, cols), cfg)
    kernels.add_one[grid, block](d)
    check_close(d.copy_to_host(), x.astype(np.float64) + 1, np.float32)
    # the tutorial's order, x on rows: blocks (ceil(rows/16), ceil(cols/16))
    d2 = cuda.to_device(x)
    kernels.add_one[((rows + 15) // 16, (cols + 15) // 16), (16, 16)](d2)
    check_close(d2.copy_to_host(), x.astype(np.float64) + 1, np.float32)


def test_add_one_runs_exactly_once_per_element_with_3d_launches(rng):
    x = random_array(rng, (10, 10), np.int32)
    d = cuda.to_device(x)
    kernels.add_one[(2, 3, 4), (4, 2, 3)](d)
    np.testing.assert_array_equal(d.copy_to_host(), x + 1)



# The launches a user writes for add and add_one: a thread an element (the
# kernels then give each working thread a 16-byte pack, one block of a few),
# a few elements a thread (the tile groups shrink), and many (the grid-stride
# loop), each on odd sizes and on views that start off a 16-byte boundary.
ODD_SIZES = [1, 31, 33, 4097, 2**20 + 3]
USER_CONFIGS_1D = ["launch_config", 128, 256, 1024, "2 a thread", "3 a thread",
                   "8 a thread"]


def user_config_1d(n, cfg):
    if cfg == "launch_config":
        return cuda.launch_config(n)
    if isinstance(cfg, int):
        return -(-n // cfg), cfg
    per_thread = int(cfg.split()[0])
    return -(-n // (256 * per_thread)), 256


@pytest.mark.parametrize("cfg", USER_CONFIGS_1D, ids=str)
@pytest.mark.parametrize("n", ODD_SIZES)
@pytest.mark.parametrize("dtype", KERNEL_DTYPES)
def test_add_and_add_one_match_numpy_at_user_configs(rng, dtype, n, cfg):
    a, b = random_array(rng, n + 1, dtype), random_array(rng, n + 1, dtype)
    for start in (0, 1):  # d[1:] starts 4 or 8 bytes past an aligned allocation
        m = n + 1 - start
        da, db = cuda.to_device(a)[start:], cuda.to_device(b)[start:]
        out = pygpu.full(n + 1, 77, dtype=dtype)[start:]
        grid, block = user_config_1d(m, cfg)
        kernels.add[grid, block](da, db, out)
        check_close(out.copy_to_host(), a[start:].astype(np.float64) + b[start:], dtype)
        kernels.add_one[grid, block](da)
        check_close(da.copy_to_host(), a[start:].astype(np.float64) + 1, dtype)
        np.testing.assert_array_equal(db.copy_to_host(), b[start:])


@pytest.mark.parametrize("block", [(16, 16), (32, 32)], ids=str)
@pytest.mark.parametrize("shape", [(1, 1), (1, 31), (33, 1), (17, 241), (1025, 1023)],
                         ids=str)
@pytest.mark.parametrize("dtype", KERNEL_DTYPES)
def test_add_and_add_one_match_numpy_at_2d_tutorial_configs(rng, dtype, shape, block):
    rows, cols = shape
    a, b = random_array(rng, (rows + 1, cols), dtype), random_array(rng, (rows + 1, cols), dtype)
    bx, by = block
    grids = [(-(-cols // bx), -(-rows // by)),  # x on columns, as launch_config
             (-(-rows // bx), -(-cols // by))]  # the tutorials' order, x on rows
    for grid in grids:
        for start in (0, 1):  # d[1:] starts a row (odd columns: unaligned) in
            da, db = cuda.to_device(a)[start:start + rows], cuda.to_device(b)[start:start + rows]
            out = pygpu.full((rows, cols), 77, dtype=dtype)
            kernels.add[grid, block](da, db, out)
            ref = a[start:start + rows].astype(np.float64)
            check_close(out.copy_to_host(), ref + b[start:start + rows], dtype)
            kernels.add_one[grid, block](da)
            check_close(da.copy_to_host(), ref + 1, dtype)


def test_add_tiles_cover_grids_larger_than_needed_and_3d(rng):
    n = 4097
    a, b = random_array(rng, n, np.float32), random_array(rng, n, np.float32)
    for grid, block in [(10_000, 256), ((3, 5, 7), (4, 3, 5)), ((2, 2, 2), (8, 8, 4)),
                        (n, 1), ((n + 1) // 2, (1, 2, 1)), (1, 1024)]:
        out = pygpu.full(n, np.nan, dtype=np.float32)
        kernels.add[grid, block](cuda.to_device(a), cuda.to_device(b), out)
        check_close(out.copy_to_host(), a.astype(np.float64) + b, np.float32)
        d = cuda.to_device(a)
        kernels.add_one[grid, block](d)
        check_close(d.copy_to_host(), a.astype(np.float64) + 1, np.float32)


MATMUL_SHAPES = [(1, 1, 1), (1, 5, 1), (5, 1, 7), (2, 3, 4), (16, 16, 16), (17, 15, 33),
                 (31, 33, 32), (64, 1, 64), (1, 300, 1), (100, 37, 3), (3, 37, 100),
                 (129, 65, 67)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n", MATMUL_SHAPES)
@pytest.mark.parametrize("kernel,block", [("matmul_naive", (16, 16)), ("matmul_naive", (8, 32)),
                                          ("matmul_shared", (16, 16)),
                                          ("matmul_shared", (32, 32)),
                                          ("matmul_tiled", 256)])
def test_matmul_kernels(rng, dtype, m, k, n, kernel, block):
    A, B = random_array(rng, (m, k), dtype), random_array(rng, (k, n), dtype)
    C = pygpu.full((m, n), np.nan, dtype=dtype)
    if block == 256:
        grid = ((n + 127) // 128, (m + 127) // 128)
    else:
        grid = cuda.launch_config((m, n), block)[0]
    getattr(kernels, kernel)[grid, block](cuda.to_device(A), cuda.to_device(B), C)
    tol = 1e-6 if dtype == np.float32 else 1e-14
    assert matmul_error(C.copy_to_host(), A, B) <= tol


@pytest.mark.parametrize("kernel", ["matmul_naive", "matmul_shared", "matmul_tiled"])
@pytest.mark.parametrize("grid", [1, (1, 1), (3, 1), (1, 5), (2, 3, 2), (40, 40)], ids=str)
def test_matmul_any_grid_gives_the_whole_result(rng, kernel, grid):
    m, k, n = (300, 20, 270) if kernel == "matmul_tiled" else (45, 20, 50)
    A = random_array(rng, (m, k), np.float64)
    B = random_array(rng, (k, n), np.float64)
    C = pygpu.full((m, n), np.nan)
    block = 256 if kernel == "matmul_tiled" else (16, 16)
    getattr(kernels, kernel)[grid, block](cuda.to_device(A), cuda.to_device(B), C)
    assert matmul_error(C.copy_to_host(), A, B) <= 1e-14


def test_matmul_swapped_tutorial_grid(rng):
    m, k, n = 50, 30, 20
    A = random_array(rng, (m, k), np.float32)
    B = random_array(rng, (k, n), np.float32)
    for grid in [((m + 15) // 16, (n + 15) // 16), ((n + 15) // 16, (m + 15) // 16)]:
        for kernel in (kernels.matmul_naive, kernels.matmul_shared):
            C = pygpu.full((m, n), np.nan, dtype=np.float32)
            kernel[grid, (16, 16)](cuda.to_device(A), cuda.to_device(B), C)
            assert rel_error(C.copy_to_host(), A.astype(np.float64) @ B) <= 1e-5


def test_matmul_with_zero_inner_dimension_gives_zeros():
    A, B = pygpu.zeros((3, 0)), pygpu.zeros((0, 4))
    C = pygpu.full((3, 4), 5.0)
    kernels.matmul_shared[1, (16, 16)](A, B, C)
    np.testing.assert_array_equal(C.copy_to_host(), np.zeros((3, 4)))
    assert (A @ B).shape == (3, 4)
    empty = pygpu.matmul(pygpu.zeros((0, 3)), pygpu.zeros((3, 2)))
    assert empty.shape == (0, 2)


@pytest.mark.parametrize("method", ["naive", "shared", "tiled", "auto"])
def test_high_level_matmul_and_operator(rng, method):
    A = random_array(rng, (70, 40), np.float32)
    B = random_array(rng, (40, 90), np.float32)
    dA, dB = cuda.to_device(A), cuda.to_device(B)
    ref = A.astype(np.float64) @ B
    assert rel_error(pygpu.matmul(dA, dB, method=method).copy_to_host(), ref) <= 1e-5
    assert rel_error((dA @ dB).copy_to_host(), ref) <= 1e-5
    out = pygpu.empty((70, 90), dtype=np.float32)
    assert pygpu.matmul(dA, dB, method=method, out=out) is out
    assert rel_error(out.copy_to_host(), ref) <= 1e-5
    # strided operands are copied to contiguous ones first
    assert rel_error((dB.T @ dA.T).copy_to_host(), ref.T) <= 1e-5


def test_high_level_add_and_operators(rng):
    a = random_array(rng, (33, 17), np.float64)
    b = random_array(rng, (33, 17), np.float64)
    da, db = cuda.to_device(a), cuda.to_device(b)
    np.testing.assert_allclose((da + db).copy_to_host(), a + b, rtol=1e-15)
    np.testing.assert_allclose(pygpu.add(da, db).copy_to_host(), a + b, rtol=1e-15)
    out = pygpu.empty_like(da)
    assert pygpu.add(da, db, out=out) is out
    np.testing.assert_allclose(out.copy_to_host(), a + b, rtol=1e-15)
    np.testing.assert_allclose((da.T + db.T).copy_to_host(), (a + b).T, rtol=1e-15)
    keep = da
    da += db
    assert da is keep
    np.testing.assert_allclose(da.copy_to_host(), a + b, rtol=1e-15)
    v = da[:, ::2]
    v += 1.0
    expected = a + b
    expected[:, ::2] += 1
    np.testing.assert_allclose(da.copy_to_host(), expected, rtol=1e-15)
    c = cuda.to_device(a)
    assert pygpu.add_one(c) is c
    np.testing.assert_allclose(c.copy_to_host(), a + 1, rtol=1e-15)
    s = cuda.to_device(a)
    pygpu.add_one(s[::3])
    e = a.copy()
    e[::3] += 1
    np.testing.assert_allclose(s.copy_to_host(), e, rtol=1e-15)


def test_large_arrays(rng):
    n = 1 << 22 if ON_SIMULATOR else 1 << 26
    a = random_array(rng, n, np.float32)
    b = random_array(rng, n, np.float32)
    out = pygpu.add(cuda.to_device(a), cuda.to_device(b))
    check_close(out.copy_to_host(), a.astype(np.float64) + b, np.float32)
    m = 160 if ON_SIMULATOR else 1024
    A = random_array(rng, (m, m + 3), np.float32)
    B = random_array(rng, (m + 3, m - 5), np.float32)
    for method in ("naive", "shared", "tiled"):
        C = pygpu.matmul(cuda.to_device(A), cuda.to_device(B), method=method)
        assert rel_error(C.copy_to_host(), A.astype(np.float64) @ B) <= 1e-5


@pytest.mark.gpu
def test_more_than_2_to_the_31_elements(rng):
    n = 2**31 + 1000
    d = pygpu.zeros(n, dtype=np.int32)
    pygpu.add_one(d)
    tail = d[-2000:].copy_to_host()
    assert (tail == 1).all()
    grid, block = cuda.launch_config(n, 256)
    kernels.add_one[grid, block](d)
    assert (d[2**31 - 5: 2**31 + 5].copy_to_host() == 2).all()


# ---- launch mistakes -----------------------------------------------------------

def test_bad_launch_configurations():
    d = pygpu.zeros(10, dtype=np.float32)
    dev = cuda.gpus[0]
    with pytest.raises(ValueError, match="at least 1"):
        kernels.add_one[0, 32](d)
    with pytest.raises(ValueError, match="at least 1"):
        kernels.add_one[1, (32, -1)](d)
    with pytest.raises(ValueError, match=f"at most {dev.max_threads_per_block} per block"):
        kernels.add_one[1, (64, 32)](d)
    with pytest.raises(ValueError, match="block has 2048 threads"):
        kernels.add_one[1, 2048](d)
    with pytest.raises(ValueError, match="block dimension z"):
        kernels.add_one[1, (1, 1, 128)](d)
    with pytest.raises(ValueError, match="grid dimension y"):
        kernels.add_one[(1, 70000), 32](d)
    with pytest.raises(ValueError, match="grid dimension x"):
        kernels.add_one[2**40, 32](d)
    with pytest.raises(TypeError, match="math.ceil"):
        kernels.add_one[2.5, 32](d)
    with pytest.raises(TypeError, match="int or a tuple"):
        kernels.add_one["1", 32](d)
    with pytest.raises(ValueError, match="1 to 3"):
        kernels.add_one[(1, 1, 1, 1), 32](d)
    with pytest.raises(TypeError, match="kernel\\[blocks_per_grid"):
        kernels.add_one[1](d)
    with pytest.raises(TypeError, match="launch configuration"):
        kernels.add_one(d)
    with pytest.raises(TypeError, match="stream"):
        kernels.add_one[1, 32, "s"](d)
    kernels.add_one[1, 32, None](d)
    kernels.add_one[1, 32, 0, 0](d)
    np.testing.assert_array_equal(d.copy_to_host(), np.full(10, 2, np.float32))
    with pytest.raises(ValueError, match="dynamic shared memory"):
        kernels.add_one[1, 32, 0, 1024](d)


def test_bad_kernel_arguments():
    f32 = pygpu.zeros((4, 4), dtype=np.float32)
    f64 = pygpu.zeros((4, 4), dtype=np.float64)
    i16 = pygpu.zeros((4, 4), dtype=np.int16)
    with pytest.raises(TypeError, match="takes 3 arguments, got 2"):
        kernels.add[1, 32](f32, f32)
    with pytest.raises(TypeError, match="takes 1 argument, got 2"):
        kernels.add_one[1, 32](f32, f32)
    with pytest.raises(TypeError, match="positional"):
        kernels.add_one[1, 32](A=f32)
    with pytest.raises(TypeError, match="to_device"):
        kernels.add_one[1, 32](np.zeros(3, np.float32))
    with pytest.raises(TypeError, match="must be a pygpu.DeviceArray"):
        kernels.add[1, 32](f32, f32, [0])
    with pytest.raises(TypeError, match="dtype mismatch"):
        kernels.add[1, 32](f32, f64, f32)
    with pytest.raises(TypeError, match="int16"):
        kernels.add_one[1, 32](i16)
    with pytest.raises(ValueError, match="shape mismatch"):
        kernels.add[1, 32](f32, pygpu.zeros((4, 5), dtype=np.float32), f32)
    with pytest.raises(ValueError, match="contiguous"):
        kernels.add_one[1, 32](f32[:, ::2])
    with pytest.raises(ValueError, match="contiguous"):
        kernels.add[1, 32](f32[::2], f32[1::2], pygpu.zeros((2, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="Fortran"):
        kernels.add[1, 32](f32, f32.copy(order="F"), f32)
    with pytest.raises(TypeError, match="float32 or float64"):
        kernels.matmul_naive[1, 32](*(pygpu.zeros((2, 2), dtype=np.int32),) * 3)
    with pytest.raises(ValueError, match="must be 2-D"):
        kernels.matmul_naive[1, 32](pygpu.zeros(4), pygpu.zeros((4, 1)), pygpu.zeros((1, 1)))
    with pytest.raises(ValueError, match="A's columns must equal B's rows"):
        kernels.matmul_naive[1, 32](pygpu.zeros((2, 3)), pygpu.zeros((4, 2)), pygpu.zeros((2, 2)))
    with pytest.raises(ValueError, match="C must be 2 x 2"):
        kernels.matmul_naive[1, 32](pygpu.zeros((2, 3)), pygpu.zeros((3, 2)), pygpu.zeros((2, 3)))
    with pytest.raises(ValueError, match="C-contiguous"):
        kernels.matmul_naive[1, 32](f64.T, f64, pygpu.zeros((4, 4)))
    with pytest.raises(ValueError, match="shares memory"):
        kernels.matmul_naive[1, 32](f64, pygpu.zeros((4, 4)), f64)
    with pytest.raises(ValueError, match=r"\(16, 16\) or \(32, 32\)"):
        kernels.matmul_shared[1, (8, 8)](f64, f64, pygpu.zeros((4, 4)))
    with pytest.raises(ValueError, match=r"256 threads \(256, 1, 1\)"):
        kernels.matmul_tiled[1, (16, 16)](f64, f64, pygpu.zeros((4, 4)))
    with pytest.raises(ValueError, match="method must be"):
        pygpu.matmul(f64, f64, method="fast")
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        pygpu.zeros(()) @ pygpu.zeros(3)
    with pytest.raises(TypeError):
        f32 @ np.zeros((4, 4), np.float32)
    # the operators follow NumPy: promotion, broadcasting, NumPy's refusals
    assert (f32 + f64).dtype == np.float64
    assert (f32 + pygpu.zeros(4, dtype=np.float32)).shape == (4, 4)
    with pytest.raises(ValueError, match="shape mismatch"):
        f32 + pygpu.zeros(5, dtype=np.float32)
    with pytest.raises(TypeError):
        f32 + "a"
    assert (i16 + i16).dtype == np.int16
    with pytest.raises(TypeError, match="float32, float64, int32 or int64"):
        kernels.add[1, 32](i16, i16, i16)


def test_arrays_on_another_device_are_refused():
    if len(cuda.gpus) < 2:
        pytest.skip("one device only")
    with cuda.gpus[1]:
        other = pygpu.zeros(8, dtype=np.float32)
    here = pygpu.zeros(8, dtype=np.float32)
    with pytest.raises(ValueError, match="is on device 1, but the launch runs on device 0"):
        kernels.add[1, 32](here, other, here)
    with pytest.raises(ValueError, match="is on device 0, but the launch runs on device 1"):
        kernels.add[1, 32](other, here, other)
    with cuda.gpus[1]:
        kernels.add_one[1, 32](other)
    assert (other.copy_to_host() == 1).all()
    # a launch runs where its arrays are, whatever device is current
    kernels.add_one[1, 32](other)
    with cuda.gpus[0]:
        kernels.add[1, 32](other, other, other)
    assert (other.copy_to_host() == 4).all()


def test_kernel_objects_describe_themselves():
    assert "add_one[grid, block](A)" in kernels.add_one.__doc__
    assert repr(kernels.matmul_shared) == "<pygpu kernel matmul_shared>"
    launch = kernels.add[(2, 3), (16, 4)]
    assert launch.grid == (2, 3, 1) and launch.block == (16, 4, 1)
    assert "add[(2, 3, 1), (16, 4, 1)]" in repr(launch)


def test_launch_config():
    assert cuda.launch_config(1000, 256) == (4, 256)
    assert cuda.launch_config(1000) == (4, 256)
    assert cuda.launch_config((100, 50), (16, 16)) == ((4, 7), (16, 16))
    assert cuda.launch_config((100, 50)) == ((4, 7), (16, 16))
    assert cuda.launch_config((5, 6, 7), (8, 4, 2)) == ((1, 2, 3), (8, 4, 2))
    assert cuda.launch_config(0, 32) == (1, 32)
    assert cuda.launch_config((10**7, 3), (1, 16))[0] == (3, 65535)
    assert "last" in cuda.launch_config.__doc__
    with pytest.raises(ValueError, match="one entry per axis"):
        cuda.launch_config((10, 10), 256)
    with pytest.raises(ValueError):
        cuda.launch_config((1, 2, 3, 4))
    with pytest.raises(ValueError):
        cuda.launch_config(10, 0)


# ---- one launch path ----------------------------------------------------------------

def test_the_kernel_list_drives_pygpu_kernels():
    table = pygpu._core.kernels
    assert list(kernels.__all__) == list(table)
    assert {"add", "add_one", "matmul_naive", "matmul_shared", "matmul_tiled"} <= set(table)
    for name, kernel in table.items():
        assert getattr(kernels, name) is kernel
        assert kernel.__name__ == name
        assert kernel.__doc__.startswith(name + "[")  # its signature, from the list
        assert repr(kernel[1, 32]).startswith(f"<pygpu kernel {name}[(1, 1, 1)")


def test_prebuilt_and_module_kernels_share_one_launch_type():
    launch = kernels.add_one[2, 64]
    assert type(launch) is pygpu._core.KernelLaunch
    assert type(kernels.matmul_tiled[1, 256, 0]) is type(launch)
    assert launch.kernel is kernels.add_one and launch.shared_bytes == 0
    assert not hasattr(pygpu._core, "FunctionLaunch")  # Module functions make KernelLaunch
    assert "KernelLaunch" in pygpu._core.Function.__doc__


def test_types_holding_python_objects_are_gc_types():
    have_gc = 1 << 14  # Py_TPFLAGS_HAVE_GC
    core = pygpu._core
    for tp in (core.KernelLaunch, core.Function, core.HostArg):
        assert tp.__flags__ & have_gc, tp
    for tp in (core.Kernel, core.Module):
        assert not tp.__flags__ & have_gc, tp


def test_a_cycle_through_a_launch_and_its_stream_is_collected():
    import gc
    import weakref

    class ForeignStream:  # a stream of another library, which keeps our launch
        def __init__(self, stream):
            self.stream = stream
            self.launch = kernels.add_one[1, 32, self]

        def __cuda_stream__(self):
            return (0, self.stream.ptr)

    d = cuda.to_device(np.arange(8.0))
    s = ForeignStream(cuda.stream())
    s.launch(d)
    s.stream.synchronize()
    assert (d.copy_to_host() == np.arange(8.0) + 1).all()
    gone = weakref.ref(s)
    del s
    gc.collect()
    assert gone() is None  # which needs the launch, in the cycle, collected too


@pytest.mark.parametrize("dtype", KERNEL_DTYPES)
def test_add_and_add_one_on_0d_and_empty_arrays_give_numpys_answer(rng, dtype):
    """A 0-d array is one element and an empty one none, whatever the launch
    (the grid is cut to the blocks that have work, never below one)."""
    a, b = random_array(rng, (), dtype), random_array(rng, (), dtype)
    for grid, block in [(1, 1), (1, 32), ((2, 2), (4, 4)), (2**20, 1024)]:
        da, db, out = cuda.to_device(a), cuda.to_device(b), pygpu.full((), 7, dtype=dtype)
        kernels.add[grid, block](da, db, out)
        assert out.shape == ()
        check_close(out.copy_to_host(), np.float64(a) + b, dtype)
        kernels.add_one[grid, block](da)
        check_close(da.copy_to_host(), np.float64(a) + 1, dtype)
        for shape in [(0,), (0, 5), (3, 0, 2)]:
            e = pygpu.empty(shape, dtype=dtype)
            kernels.add[grid, block](e, e, e)
            kernels.add_one[grid, block](e)
            assert e.shape == shape and e.copy_to_host().shape == shape
