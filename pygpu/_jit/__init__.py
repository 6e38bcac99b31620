"""pygpu.cuda.jit: kernels written in Python, translated to CUDA C++.

Layered as Numba-CUDA is: dispatcher.py (types a launch's arguments, keeps
one compiled kernel per signature, launches through the one launch path),
types.py (the types and Numba's rules for them), codegen.py (walks the
function's ast, typing each expression and writing its C++, with a #line
directive per statement) and calls.py (the functions a kernel may call),
then the driver: pygpu.rawkernel.RawModule (NVRTC on a GPU, the host
compiler on the simulator). device.py holds the device-side names of
pygpu.cuda (cuda.grid, cuda.shared.array, cuda.atomic.add, ...), random.py
Numba's xoroshiro128+ generator, and pygpu/include/pygpu/jit.h the device
helpers the generated code includes.
"""

__all__ = ["Dispatcher", "TypingError", "jit"]


def __getattr__(name):
    # the translator (ast, inspect) is imported at the first kernel, not by
    # `import pygpu`: pygpu.cuda and pygpu.cuda.random import this package
    if name in ("Dispatcher", "jit"):
        from . import dispatcher

        return getattr(dispatcher, name)
    if name == "TypingError":
        from .errors import TypingError

        return TypingError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
