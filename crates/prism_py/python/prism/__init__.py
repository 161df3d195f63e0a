"""Prism from Python: GPU kernels with typed perspectives, checked, and run on a simulator
with dynamic checks (races, bounds, divergence, uniformity) or on a GPU.

Kernels are written in Python files exactly as in Prism::

    from prism import prism, requires, ptr, const, grid, block, thread

    @prism("global")
    @requires(grid[1], block[1], thread[1])
    def saxpy(n : int, a : float, x : ptr(const(float)), y : ptr(float)):
        ...

    saxpy[4, 256](n, 2.0, x, y)        # NumPy arrays; y is updated in place

or compiled from ``.prism`` text or files with :func:`compile`. Errors in the program raise
:class:`CompileError`; a dynamic check that fires raises :class:`KernelFault`; bad launch
arguments raise ``TypeError``/``ValueError`` naming the parameter. docs/python.md is the
guide.
"""

import sys as _sys
import types as _types

from ._prism import DeviceError, InternalError, __version__
from ._errors import CompileError, CompileWarning, KernelFault, Record
from ._kernel import Function, Kernel, Module, Param, compile, launch_bounds, prism, requires
from . import std
from ._markers import (
    bf16,
    block,
    const,
    constexpr,
    double,
    grid,
    half,
    int64,
    ptr,
    shared,
    tensor_map,
    thread,
    uint,
    uint64,
    warp,
    warpgroup,
)


def driver_present() -> bool:
    """Whether the CUDA driver library can be loaded (``device="cuda"`` needs it)."""
    from ._prism import driver_present as present

    return present()


#: What ``from prism import *`` brings into a file of kernels: the decorators and the
#: names of Prism's signature syntax (not ``compile``, which would shadow the builtin).
__all__ = [
    "prism",
    "requires",
    "launch_bounds",
    "grid",
    "block",
    "warpgroup",
    "warp",
    "thread",
    "ptr",
    "const",
    "shared",
    "tensor_map",
    "constexpr",
    "half",
    "bf16",
    "double",
    "uint",
    "int64",
    "uint64",
    "CompileError",
    "KernelFault",
]


class _CallableModule(_types.ModuleType):
    """The package itself is the decorator too, so ``import prism`` then
    ``@prism("global")`` works (and keeps working after ``import prism.std.warp``, which
    binds the name ``prism`` to this package)."""

    def __call__(self, kind):
        return prism(kind)


_sys.modules[__name__].__class__ = _CallableModule
