"""Launch arguments: NumPy arrays and Python scalars in, results written back.

Arguments are marshalled into the tagged tuples the native module checks against the
kernel's signature (``crates/prism_py/src/args.rs``):

- a NumPy array becomes ``("array", dtype, bytes, shape)``: its elements little-endian in C
  order, whatever its layout. After a clean run each array the kernel changed is written
  back in place (``a[...] = result``), so views and non-contiguous arrays work too;
- for ``device="cuda"``, an object with ``__cuda_array_interface__`` (CuPy, PyTorch, Numba)
  or a CUDA DLPack capsule (``__dlpack__``, JAX) becomes ``("device", dtype, address,
  count)``; it must be C-contiguous, and the kernel works on it in place;
- anything else goes as ``("value", x)``: a scalar, or a mistake the native side reports
  with a ``TypeError`` naming the parameter.

Arrays that overlap in memory are refused when the kernel writes either of them
(``refuse_overlap``; the native side does the same for device arrays from their extents):
the checker proves a kernel race-free assuming its pointer parameters are distinct memory,
and the results of copies written back into one array would depend on their order.
"""

from __future__ import annotations

import ctypes
import operator
import sys

from . import _prism
from ._errors import DeviceError, KernelFault, records

_MAX_DIM = 2**32 - 1


def dim3(value, what: str) -> tuple:
    """A launch extent: an int, or a tuple of one to three ints, each at least 1."""
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if not 1 <= len(items) <= 3:
        raise ValueError(f"{what} must be a count or a tuple of 1 to 3 counts, not {value!r}")
    out = []
    for x in items:
        if isinstance(x, bool):
            raise TypeError(f"{what} must be made of ints, not {value!r}")
        try:
            n = operator.index(x)
        except TypeError:
            raise TypeError(f"{what} must be made of ints, not {value!r}") from None
        if not 1 <= n <= _MAX_DIM:
            raise ValueError(f"{what} extents must be from 1 to {_MAX_DIM}, not {n} (in {value!r})")
        out.append(n)
    return tuple(out + [1] * (3 - len(out)))


def _numpy():
    import numpy

    return numpy


def _little(np, a):
    order = a.dtype.byteorder
    if order == ">" or (order == "=" and sys.byteorder == "big"):
        return a.astype(a.dtype.newbyteorder("<"))
    return a


def host_arg(a):
    """One argument for the simulator (or a launch with copies)."""
    np = _numpy()
    if isinstance(a, np.ndarray):
        if a.ndim == 0:
            return ("value", a[()])
        return ("array", a.dtype.name, _little(np, a).tobytes(order="C"), tuple(int(d) for d in a.shape))
    return ("value", a)


def is_device_array(a) -> bool:
    if hasattr(a, "__cuda_array_interface__"):
        return True
    dev = getattr(a, "__dlpack_device__", None)
    if dev is None or not hasattr(a, "__dlpack__"):
        return False
    try:
        return dev()[0] in (_KDL_CUDA, _KDL_CUDA_MANAGED)
    except Exception:
        return False


def write_back(params, args, marshalled, buffers):
    """Copies each changed buffer into its NumPy array, in place."""
    np = _numpy()
    for p, a, m, new in zip(params, args, marshalled, buffers):
        if new is None or not isinstance(a, np.ndarray) or m[0] != "array" or new == m[2]:
            continue
        if not a.flags.writeable:
            raise ValueError(f"argument `{p.name}`: the kernel wrote to it, but the array is read-only")
        result = np.frombuffer(new, dtype=a.dtype.newbyteorder("<")).reshape(a.shape)
        a[...] = result


def refuse_overlap(program, kernel, args):
    """``ValueError`` when two NumPy arrays share memory and the kernel writes either."""
    np = _numpy()
    arrays = [(p, a) for p, a in zip(kernel.params, args) if isinstance(a, np.ndarray) and a.ndim > 0]
    pairs = [
        (p, q)
        for i, (p, a) in enumerate(arrays)
        for q, b in arrays[i + 1 :]
        if a.size and b.size and np.shares_memory(a, b)
    ]
    if not pairs:
        return
    written = program.written_params(kernel.name)
    for p, q in pairs:
        if p.name in written or q.name in written:
            who = " and ".join(f"`{n}`" for n in (p.name, q.name) if n in written)
            raise ValueError(
                f"arguments `{p.name}` and `{q.name}` of `{kernel.name}` share memory and the kernel "
                f"writes {who}: a kernel's pointer parameters must be distinct memory unless both are "
                f"only read (argument-alias); pass a copy"
            )


def run_sim(program, kernel, grid, block, args, options):
    _refuse_device_arrays(kernel, args)
    refuse_overlap(program, kernel, args)
    marshalled = [host_arg(a) for a in args]
    buffers, text, json_lines, _steps = program.launch(
        kernel.name,
        grid,
        block,
        marshalled,
        checks=options["checks"],
        seed=options["seed"],
        fuel=options["fuel"],
        stall_limit=options["stall_limit"],
    )
    if json_lines:
        reports = records(json_lines)
        for r in reports:
            r["kind"] = r["code"]
        raise KernelFault(kernel.name, text, reports)
    write_back(kernel.params, args, marshalled, buffers)


_NO_DRIVER = (
    "no CUDA driver found (libcuda could not be loaded), so nothing can run on a GPU "
    "here; run on the simulator with the default device='sim'"
)


def run_cuda(program, kernel, grid, block, args, options):
    if any(is_device_array(a) for a in args):
        keep = []  # DLPack capsules stay alive until the launch is over.
        marshalled, ordinals = [], set()
        for p, a in zip(kernel.params, args):
            if is_device_array(a):
                tagged, ordinal = _device_arg(p, a, keep)
                marshalled.append(tagged)
                ordinals.add(ordinal)
            else:
                marshalled.append(host_arg(a))
        if len(ordinals) > 1:
            raise ValueError(f"the device arrays live on different GPUs ({sorted(ordinals)}); a launch uses one")
        # The native side refuses wrong arguments (overlapping arrays among them) before it
        # looks for a driver, so those mistakes are reported on any machine.
        program.launch_device(kernel.name, grid, block, marshalled, ordinals.pop() if ordinals else 0)
        return
    refuse_overlap(program, kernel, args)
    if not _prism.driver_present():
        raise DeviceError(_NO_DRIVER)
    marshalled = [host_arg(a) for a in args]
    buffers = program.launch_cuda(kernel.name, grid, block, marshalled)
    write_back(kernel.params, args, marshalled, buffers)


def _refuse_device_arrays(kernel, args):
    for p, a in zip(kernel.params, args):
        if is_device_array(a):
            raise TypeError(
                f"argument `{p.name}` of `{kernel.name}` is a GPU array ({type(a).__module__}."
                f"{type(a).__qualname__}); the simulator takes NumPy arrays: copy it to the host, "
                f"or run on the GPU with .options(device='cuda')"
            )


# DLPack (dlpack.h): device types and the tensor's layout.
_KDL_CUDA = 2
_KDL_CUDA_MANAGED = 13
_DL_CODES = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 6: "bool"}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


def _contiguous(shape, strides, itemsize) -> bool:
    """Whether element strides (or byte strides when ``itemsize`` is 1) describe C order."""
    expect = itemsize
    for n, s in reversed(list(zip(shape, strides))):
        if n != 1 and s != expect:
            return False
        expect *= n
    return True


def _device_arg(p, a, keep):
    """``(("device", dtype, address), ordinal)`` for a GPU array."""
    np = _numpy()
    cai = getattr(a, "__cuda_array_interface__", None)
    if cai is not None:
        dtype = np.dtype(cai["typestr"])
        shape = tuple(cai["shape"])
        strides = cai.get("strides")
        if strides is not None and not _contiguous(shape, strides, dtype.itemsize):
            raise ValueError(f"argument `{p.name}`: the device array must be C-contiguous (strides {strides})")
        ordinal = 0
        if hasattr(a, "__dlpack_device__"):
            try:
                ordinal = int(a.__dlpack_device__()[1])
            except Exception:
                ordinal = 0
        return ("device", dtype.name, int(cai["data"][0]), _count(shape)), ordinal
    capsule = a.__dlpack__()
    keep.append(capsule)
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    t = _DLTensor.from_address(get(capsule, b"dltensor"))
    code = _DL_CODES.get(t.dtype.code)
    if code is None or t.dtype.lanes != 1:
        raise TypeError(f"argument `{p.name}`: DLPack element type code {t.dtype.code} has no Prism type")
    name = {"bool": "bool", "bfloat": "bfloat16"}.get(code, f"{code}{t.dtype.bits}")
    shape = [t.shape[k] for k in range(t.ndim)]
    if t.strides and not _contiguous(shape, [t.strides[k] for k in range(t.ndim)], 1):
        raise ValueError(f"argument `{p.name}`: the device array must be C-contiguous")
    return ("device", name, int(t.data or 0) + int(t.byte_offset), _count(shape)), int(t.device.device_id)


def _count(shape) -> int:
    """The number of elements of an array of ``shape``."""
    n = 1
    for d in shape:
        n *= int(d)
    return n
