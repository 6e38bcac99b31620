"""Memory from other libraries is checked before it is used, and memory
exported to pygpu read-only stays read-only."""

import ctypes as C

import numpy as np
import pytest

import pygpu
from pygpu import cuda


class Exported:
    def __init__(self, arr, data=None, readonly=False, shape=None):
        cai = dict(arr.__cuda_array_interface__)
        cai["data"] = (arr.ptr if data is None else data, readonly)
        if shape is not None:
            cai["shape"] = shape
        self.arr = arr
        self.__cuda_array_interface__ = cai


def test_null_pointer_with_elements_is_refused():
    with pytest.raises(ValueError, match="NULL data pointer"):
        pygpu.asarray(Exported(pygpu.zeros(4), data=0))


def test_null_pointer_of_an_empty_array_is_fine():
    e = pygpu.asarray(Exported(pygpu.zeros(0), data=0))
    assert e.shape == (0,) and e.copy_to_host().shape == (0,)


@pytest.mark.gpu
def test_host_pointer_is_refused_on_a_gpu():
    h = np.zeros(4)
    with pytest.raises(ValueError, match="not device memory"):
        pygpu.asarray(Exported(pygpu.zeros(4), data=h.ctypes.data))


@pytest.mark.gpu
def test_made_up_pointer_is_refused_on_a_gpu():
    with pytest.raises(ValueError, match="not device memory"):
        pygpu.asarray(Exported(pygpu.zeros(4), data=1234))


def read_only(rng):
    h = rng.standard_normal((3, 4))
    src = cuda.to_device(h)
    return h, src, pygpu.asarray(Exported(src, readonly=True))


def test_read_only_interface_gives_an_array_that_refuses_writes(rng):
    h, _, r = read_only(rng)
    assert r.flags["WRITEABLE"] is False and r[1:].flags["WRITEABLE"] is False
    np.testing.assert_array_equal(r.copy_to_host(), h)  # reads are fine
    with pytest.raises(ValueError, match="read-only"):
        r[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        r[1:, ::2] = 0.0
    with pytest.raises(ValueError, match="read-only"):
        r.copy_to_device(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="read-only"):
        cuda.to_device(np.zeros((3, 4)), to=r)
    np.testing.assert_array_equal(r.copy_to_host(), h)  # nothing was written
    c = r.copy()
    c[0] = 1.0  # a copy is writeable
    assert c.flags["WRITEABLE"]


def test_read_only_survives_the_round_trip_through_interfaces(rng):
    _, _, r = read_only(rng)
    assert r.__cuda_array_interface__["data"][1] is True
    back = pygpu.from_dlpack(r)  # our own export keeps the buffer
    with pytest.raises(ValueError, match="read-only"):
        back[0] = 2.0
    with pytest.raises(BufferError, match="read-only"):
        r.__dlpack__()  # DLPack 0.x cannot say read-only
    r.__dlpack__(max_version=(1, 0))


def test_read_only_arrays_refuse_to_be_written_by_operations(rng):
    import pygpu.kernels as k

    _, src, r = read_only(rng)
    with pytest.raises(ValueError, match="read-only"):
        pygpu.add_one(r)
    with pytest.raises(ValueError, match="read-only"):
        k.add_one[1, 32](r)
    with pytest.raises(ValueError, match="read-only"):
        pygpu.add(src, src, out=r)
    with pytest.raises(ValueError, match="read-only"):
        r += 1.0
    sq = pygpu.asarray(Exported(pygpu.zeros((4, 4)), readonly=True))
    with pytest.raises(ValueError, match="read-only"):
        pygpu.matmul(pygpu.zeros((4, 4)), pygpu.zeros((4, 4)), out=sq)
    # reading them is fine
    np.testing.assert_allclose((r + r).copy_to_host(), 2 * src.copy_to_host())


def test_made_up_pointer_is_refused_not_a_crash():
    # on the simulator too: the pointer must lie in a live allocation
    with pytest.raises(ValueError, match=r"0x4d2|not device memory|not inside"):
        pygpu.asarray(Exported(pygpu.zeros(4), data=1234))


def test_extent_past_the_allocation_is_refused(rng):
    src = cuda.to_device(rng.standard_normal(4))
    with pytest.raises(ValueError, match="past the end of the device allocation"):
        pygpu.asarray(Exported(src, shape=(1 << 20,)))
    with pytest.raises(ValueError, match="past the end of the device allocation"):
        pygpu.asarray(Exported(src, data=src.ptr + 8, shape=(1 << 20,)))


def test_pointer_into_a_freed_allocation_is_refused():
    big = pygpu.empty(1 << 22)
    ptr = big.ptr
    del big
    pygpu.get_memory_pool().free_all_blocks()  # the allocation goes back
    with pytest.raises(ValueError, match="not device memory|not inside"):
        pygpu.asarray(Exported(pygpu.zeros(4), data=ptr, shape=(1 << 22,)))


def test_a_sub_range_of_a_live_array_is_fine(rng):
    h = rng.standard_normal(16)
    src = cuda.to_device(h)
    view = pygpu.asarray(Exported(src, data=src.ptr + 8 * 3, shape=(13,)))
    np.testing.assert_array_equal(view.copy_to_host(), h[3:])
    view = pygpu.asarray(Exported(src, data=src.ptr + 8 * 15, shape=(1,)))
    np.testing.assert_array_equal(view.copy_to_host(), h[15:])


class _DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device_type", C.c_int), ("device_id", C.c_int32),
                ("ndim", C.c_int32), ("code", C.c_uint8), ("bits", C.c_uint8),
                ("lanes", C.c_uint16), ("shape", C.c_void_p), ("strides", C.c_void_p),
                ("byte_offset", C.c_uint64)]


class _DLManaged(C.Structure):
    _fields_ = [("tensor", _DLTensor), ("ctx", C.c_void_p), ("deleter", C.c_void_p)]


class HandMadeDLPack:
    """A producer whose capsule holds a DLManagedTensor made by hand: a
    float32 vector of 4 (shape as given), no deleter."""

    def __init__(self, data, shape=True, byte_offset=0):
        self.shape = (C.c_int64 * 1)(4)
        dev = cuda.get_current_device().id
        self.m = _DLManaged(_DLTensor(data, 2, dev, 1, 2, 32, 1,
                                      C.addressof(self.shape) if shape else None, None,
                                      byte_offset), None, None)
        new = C.pythonapi.PyCapsule_New
        new.restype, new.argtypes = C.py_object, [C.c_void_p, C.c_char_p, C.c_void_p]
        self.capsule = new(C.addressof(self.m), b"dltensor", None)

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (2, cuda.get_current_device().id)


def test_dlpack_tensors_without_data_or_shape_or_aligned_data_are_refused():
    """Each crashed the interpreter (NULL data, NULL shape) or read garbage
    (an offset of 2 bytes into float32s, which a GPU cannot load)."""
    a = pygpu.zeros(8, np.float32)
    with pytest.raises(ValueError, match="NULL data pointer"):
        pygpu.from_dlpack(HandMadeDLPack(0))
    with pytest.raises(ValueError, match="has no shape"):
        pygpu.from_dlpack(HandMadeDLPack(a.ptr, shape=False))
    with pytest.raises(ValueError, match="not multiples of its 4-byte elements"):
        pygpu.from_dlpack(HandMadeDLPack(a.ptr, byte_offset=2))
    ok = pygpu.from_dlpack(HandMadeDLPack(a.ptr, byte_offset=4))
    assert ok.copy_to_host().tolist() == [0.0] * 4


def test_misaligned_cuda_array_interface_data_or_strides_are_refused():
    a = pygpu.zeros(8, np.float32)
    with pytest.raises(ValueError, match="not multiples"):
        pygpu.asarray(Exported(a, data=a.ptr + 1))
    odd = Exported(a, shape=(2,))
    odd.__cuda_array_interface__["strides"] = (3,)
    with pytest.raises(ValueError, match="not multiples"):
        pygpu.asarray(odd)


def test_memory_of_a_freed_array_is_refused():
    """The pool keeps a freed array's memory for the next: an interface that
    outlived its array pointed into it, and the next array's writes showed
    through (a silent wrong answer)."""
    b = cuda.to_device(np.arange(1024, dtype=np.float32))

    class Stale:
        __cuda_array_interface__ = dict(b.__cuda_array_interface__)

    del b
    with pytest.raises(ValueError, match="pool holds free|not device memory"):
        pygpu.asarray(Stale())
    c = cuda.to_device(np.arange(6.0))
    np.testing.assert_array_equal(pygpu.asarray(Exported(c[::-2])).copy_to_host(),
                                  np.arange(6.0)[::-2])
