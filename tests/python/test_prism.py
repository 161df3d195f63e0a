"""The Prism Python package against NumPy references: decorated kernels, compiled files,
launch shapes, argument checking, compile errors and dynamic-check faults.

Run by `scripts/test-python.sh` (from `.ci/run`) against the installed wheel:
    scripts/test-python.sh            # builds the wheel, installs it in a fresh venv, runs this
"""

import inspect
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

import prism
from prism import block, const, constexpr, grid, launch_bounds, ptr, requires, thread
from prism.std.block import block_exclusive_sum  # noqa: F401  (Prism reads this line)

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "tests" / "ui" / "accept" / "kernels"
CHECKS = ROOT / "tests" / "ui" / "run" / "checks"

# Corpus kernels 11 and 15 (tests/ui/accept/kernels/), written as decorated Python.
THREADS : constexpr(int) = 256
ITEMS : constexpr(int) = 4
TILE : constexpr(int) = THREADS * ITEMS


@prism("device")
@requires(thread[32])
def warp_allreduce_sum(v : float @ thread[1]) -> float @ thread[32]:
    acc : float @ thread[1] = v
    for k in range(5):
        acc += shfl_xor(acc, 1 << k)
    return shfl(acc, 0)


@prism("device")
@requires(block[1], thread[32], smem=128)
def block_sum(v : float @ thread[1]) -> float @ block[1]:
    warp_sums : shared(float[32]) @ block[1]
    t : int @ thread[1] = id()
    w : int @ thread[32] = id()
    with partition(warp_sums, p=thread[1], f=lambda i: t % 32 + i) as zero_t:
        match split(warp):
            case 1:
                with group(thread[1]):
                    zero_t[0] = 0.0
    __syncthreads()
    ws : float @ thread[32] = warp_allreduce_sum(v)
    with partition(warp_sums, p=thread[1], f=lambda i: w + i) as slot_t:
        with group(thread[32]):
            match split(thread):
                case 1:
                    slot_t[0] = ws
    __syncthreads()
    total : float @ block[1] = 0.0
    for i in range(32):
        total += warp_sums[i]
    __syncthreads()
    return total


@prism("global")
@requires(grid[1], block[1], thread[32], smem=128)
@launch_bounds(256)
def grid_dot(n : int, x : ptr(const(float)), y : ptr(const(float)),
             result : ptr(float), nonzero : ptr(int)):
    b : int @ block[1] = id()
    with group(block[1]):
        t : int @ thread[1] = id()
        base : const(int) @ block[1] = b * THREADS * ITEMS
        dot : float @ thread[1] = 0.0
        nz : int @ thread[1] = 0
        with group(thread[1]):
            for k in range(ITEMS):
                i : const(int) = base + k * THREADS + t
                if i < n:
                    p : const(float) = x[i] * y[i]
                    dot += p
                    if p != 0.0:
                        nz += 1
        block_dot : const(float) @ block[1] = block_sum(dot)
        match split(thread):
            case 1:
                atomic_add(result[0], block_dot)
        with group(thread[32]):
            warp_nz : int @ thread[32] = reduce_add(nz)
            match split(thread):
                case 1:
                    atomic_add(nonzero[0], warp_nz)


@prism("global")
@requires(grid[1], block[1], thread[32], smem=256)
@launch_bounds(256)
def tile_exclusive_scan(n : int, x : ptr(const(int)), out : ptr(int), totals : ptr(int)):
    b : int @ block[1] = id()
    with partition(out, p=block[1], f=lambda i: b * TILE + i) as out_b:
        with partition(totals, p=block[1], f=lambda i: b + i) as total_b:
            with group(block[1]):
                t : int @ thread[1] = id()
                first : const(int) @ thread[1] = b * TILE + t * ITEMS
                items : int[ITEMS] @ thread[1]
                with group(thread[1]):
                    for k in range(ITEMS):
                        if first + k < n:
                            items[k] = x[first + k]
                thread_sum : int @ thread[1] = 0
                with group(thread[1]):
                    for k in range(ITEMS):
                        thread_sum += items[k]
                prefix : int @ thread[1] = block_exclusive_sum(thread_sum, total_b)
                with partition(out_b, p=thread[1], f=lambda k: t * ITEMS + k) as out_t:
                    with group(thread[1]):
                        running : int = prefix
                        for k in range(ITEMS):
                            if first + k < n:
                                out_t[k] = running
                            running += items[k]


# An out-of-bounds read in unsafe code: the report points at this file's line.
@prism("global")
@requires(grid[1], block[1], thread[1])
def read_past_end(x : ptr(const(float)), out : ptr(float)):
    with unsafe:
        g : int = block_idx() * block_dim() + thread_idx()
        out[g] = x[g + 1]   # the last thread reads x[n]


def eighths(rng, n):
    """Floats that are multiples of 1/8 in [-4, 4): sums of their products are exact in f32."""
    return (rng.integers(-32, 32, n) / 8).astype(np.float32)


def line_of(fn, text):
    """The line of `fn`'s source file holding `text`."""
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, line in enumerate(lines) if text in line)


# --- kernels against NumPy references -------------------------------------------------


def test_decorated_grid_dot_with_device_functions():
    rng = np.random.default_rng(1)
    n = 2000
    x, y = eighths(rng, n), eighths(rng, n)
    result = np.zeros(1, np.float32)
    nonzero = np.zeros(1, np.int32)
    grid_dot[4, 256](n, x, y, result, nonzero)
    assert result[0] == np.float32(np.dot(x.astype(np.float64), y.astype(np.float64)))
    assert nonzero[0] == np.count_nonzero(x * y)


def test_decorated_scan_with_the_standard_library():
    rng = np.random.default_rng(2)
    n = 2500
    x = rng.integers(-1000, 1000, n).astype(np.int32)
    out = np.zeros(n, np.int32)
    totals = np.zeros(3, np.int32)
    tile_exclusive_scan[3, 256](n, x, out, totals)
    for b in range(3):
        tile = x[b * 1024:(b + 1) * 1024]
        assert np.array_equal(out[b * 1024:b * 1024 + len(tile)], np.cumsum(tile) - tile)
        assert totals[b] == tile.sum()


def test_compiled_file_saxpy_updates_in_place():
    mod = prism.compile(KERNELS / "01_saxpy_grid_stride.prism")
    assert mod.kernels == ["saxpy"]
    rng = np.random.default_rng(3)
    n = 1000
    x, y = eighths(rng, n), eighths(rng, n)
    expect = np.float32(1.5) * x + y
    mod.saxpy[3, 64](n, 1.5, x, y)
    assert np.array_equal(y, expect)


def test_compiled_file_from_a_str_path_runs_a_2d_launch():
    mod = prism.compile(str(KERNELS / "39_transpose_2d.prism"))
    rng = np.random.default_rng(4)
    src = rng.standard_normal((40, 70)).astype(np.float32)
    dst = np.zeros((70, 40), np.float32)
    mod.transpose2d[(3, 2), (32, 8)](src, dst, 40, 70)
    assert np.array_equal(dst, src.T)


def test_defines_build_a_variant_of_a_compiled_file():
    # Kernel 47 at CUB's sm_90 shape (128 threads x 24 items) instead of 256 x 16: the same
    # scan, on tiles of 3072 items.
    n = 10_000
    x = np.random.default_rng(47).integers(-1000, 1000, n).astype(np.int32)
    mod = prism.compile(KERNELS / "47_scan_warp_transposed.prism", defines={"THREADS": 128, "ITEMS": 24})
    tiles = -(-n // 3072)
    out = np.zeros(n, np.int32)
    mod.scan_warp_transposed[tiles, 128](n, x, out, np.zeros(1, np.int32), np.zeros(tiles, np.uint64))
    assert np.array_equal(out, np.cumsum(x, dtype=np.int32))
    # A name the file does not declare, and a value that does not fit, are compile errors;
    # a value of another type is a TypeError before anything is compiled.
    with pytest.raises(prism.CompileError) as info:
        prism.compile(KERNELS / "47_scan_warp_transposed.prism", defines={"THREAD": 128})
    assert "bad-define" in str(info.value)
    with pytest.raises(prism.CompileError) as info:
        prism.compile(KERNELS / "47_scan_warp_transposed.prism", defines={"ITEMS": 2.5})
    assert "bad-define" in str(info.value)
    with pytest.raises(TypeError):
        prism.compile(KERNELS / "47_scan_warp_transposed.prism", defines={"ITEMS": "24"})


def test_a_3d_launch_and_its_coordinates():
    mod = prism.compile(ROOT / "tests" / "ui" / "accept" / "rules" / "launch_coords.prism")
    grid3, block3 = (3, 2, 2), (4, 3, 2)
    threads = 12 * 24
    out = np.zeros(2 * threads, np.int32)
    dims = np.zeros(8 * threads, np.int32)
    mod.coords[grid3, block3](out, dims)
    g = np.arange(threads)
    b, t = g // 24, g % 24
    tx, ty, tz = t % 4, t // 4 % 3, t // 12
    bx, by, bz = b % 3, b // 3 % 2, b // 6
    assert np.array_equal(out[0::2], tx + 100 * ty + 10000 * tz)
    assert np.array_equal(out[1::2], bx + 100 * by + 10000 * bz)
    assert np.array_equal(dims.reshape(threads, 8), np.tile([4, 3, 2, 3, 2, 2, 24, 12], (threads, 1)))
    # A kernel that reads no coordinate takes 1-D launches only.
    with pytest.raises(ValueError, match="plain"):
        mod.plain[(2, 2), 64](np.zeros(256, np.int32))


def test_keyword_arguments_and_non_contiguous_arrays():
    mod = prism.compile(KERNELS / "01_saxpy_grid_stride.prism")
    n = 100
    x = np.arange(n, dtype=np.float32)
    storage = np.ones(2 * n, np.float32)
    y = storage[::2]  # a strided view: the results are copied back through it
    mod.saxpy[1, 32](n, a=2.0, x=x, y=y)
    assert np.array_equal(storage[::2], 2 * x + 1)
    assert np.array_equal(storage[1::2], np.ones(n, np.float32))


def test_imports_are_found_in_the_include_path(tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "helpers.prism").write_text(
        "@prism(\"device\")\n"
        "@requires(thread[1])\n"
        "def twice(v : float) -> float:\n"
        "    return v * 2.0\n"
    )
    main = (
        "from helpers import twice\n"
        "@prism(\"global\")\n"
        "@requires(grid[1], block[1], thread[1])\n"
        "def double_all(n : int, x : ptr(const(float)), out : ptr(float)):\n"
        "    with unsafe:\n"
        "        g : int = block_idx() * block_dim() + thread_idx()\n"
        "        if g < n:\n"
        "            out[g] = twice(x[g])\n"
    )
    with pytest.raises(prism.CompileError) as info:
        prism.compile(text=main)
    assert info.value.codes == ["unresolved-import"]
    mod = prism.compile(text=main, include=[lib])
    x = np.arange(40, dtype=np.float32)
    out = np.zeros(40, np.float32)
    mod.double_all[2, 32](40, x, out)
    assert np.array_equal(out, 2 * x)


def test_text_source_and_the_source_of_a_decorated_kernel():
    mod = prism.compile(
        "@prism(\"global\")\n"
        "@requires(grid[1], block[1], thread[1])\n"
        "def fill(n : int, v : float, out : ptr(float)):\n"
        "    with unsafe:\n"
        "        g : int = block_idx() * block_dim() + thread_idx()\n"
        "        if g < n:\n"
        "            out[g] = v\n"
    )
    out = np.zeros(50, np.float32)
    mod.fill[2, 32](50, 0.25, out)
    assert np.all(out == 0.25)
    # A decorated kernel compiles from its file, each piece on its own line.
    src = grid_dot.source().splitlines()
    assert src[line_of(grid_dot, "def grid_dot") - 1].startswith("def grid_dot(")
    assert "import pytest" not in grid_dot.source()
    assert "cuda" not in mod.kernels and "fill" in mod.cuda()


# --- exceptions ------------------------------------------------------------------------


def test_a_collective_from_the_wrong_perspective_is_a_compile_error():
    @prism("global")
    @requires(grid[1], block[1], thread[32])
    def bad_shuffle(x : ptr(float)):
        with group(block[1]):
            t : int @ thread[1] = id()
            with group(thread[1]):
                v : float = x[t]
                s : float = shfl_xor(v, 1)   # a warp collective in one thread's code

    with pytest.raises(prism.CompileError) as info:
        bad_shuffle[1, 32](np.zeros(1, np.float32))
    e = info.value
    assert "call-perspective" in e.codes
    d = next(d for d in e.diagnostics if d.code == "call-perspective")
    assert d["severity"] == "error" and d.file == __file__
    assert d.line == line_of(bad_shuffle, "shfl_xor(v, 1)")
    assert "`shfl_xor` needs thread[32] code" in d.message
    assert any(label.primary for label in d.labels)
    assert "error[call-perspective]" in str(e) and "shfl_xor(v, 1)" in str(e)


def test_syntax_errors_and_missing_modules_are_compile_errors():
    with pytest.raises(prism.CompileError) as info:
        prism.compile("@prism(\"global\")\ndef k(:\n")
    assert info.value.diagnostics and info.value.diagnostics[0].line == 2
    with pytest.raises(prism.CompileError) as info:
        prism.compile(text="from prism.std.warp import no_such_function\n")
    assert info.value.codes == ["unresolved-import"]
    with pytest.raises(FileNotFoundError):
        prism.compile(KERNELS / "no_such_kernel.prism")
    with pytest.raises(ValueError, match="unknown architecture"):
        prism.compile(KERNELS / "01_saxpy_grid_stride.prism", arch="sm_1")


def test_a_race_raises_kernel_fault_and_the_fixed_kernel_runs():
    # The racy kernels' accesses cannot be ordered by any barrier: warnings, not errors.
    with pytest.warns(prism.CompileWarning, match=r"warning\[unplaceable-barrier\]"):
        mod = prism.compile(CHECKS / "data_race.prism")
    out = np.zeros(128, np.int32)
    with pytest.raises(prism.KernelFault) as info:
        mod.buggy_shared[2, 64](out)
    e = info.value
    assert e.kernel == "buggy_shared" and "data-race" in e.kinds
    lines = (CHECKS / "data_race.prism").read_text().splitlines()
    reported = {r.line for r in e.reports}
    assert reported <= {k + 1 for k, line in enumerate(lines) if "# report: [data-race]" in line}
    r = e.reports[0]
    assert r.file.endswith("data_race.prism") and r.block in (0, 1) and 0 <= r.thread < 64
    assert "error[data-race]" in str(e)
    assert not out.any()  # a faulted run writes nothing back
    mod.fixed_shared.options(seed=7)[2, 64](out)  # under a randomised schedule too
    t = np.arange(64)
    assert np.array_equal(out, np.tile((t + 1) % 64 * 3, 2))


def test_out_of_bounds_in_a_decorated_kernel_points_at_the_python_line():
    x = np.zeros(64, np.float32)
    out = np.zeros(64, np.float32)
    with pytest.raises(prism.KernelFault) as info:
        read_past_end[2, 32](x, out)
    r = info.value.reports[0]
    assert r.kind == "out-of-bounds" and r.file == __file__
    assert r.line == line_of(read_past_end, "x[g + 1]")
    assert (r.block, r.thread) == (1, 31)
    # With the checks the run needs only, bounds are still checked.
    with pytest.raises(prism.KernelFault):
        read_past_end.options(checks="none")[2, 32](x, out)


def test_bad_launch_arguments():
    saxpy = prism.compile(KERNELS / "01_saxpy_grid_stride.prism").saxpy
    x = np.zeros(8, np.float32)
    y = np.zeros(8, np.float32)
    with pytest.raises(TypeError, match=r"`saxpy` takes 4 arguments \(n, a, x, y\), but 3 were given"):
        saxpy[1, 32](8, 1.0, x)
    with pytest.raises(TypeError, match=r"argument `x` of `saxpy` points to `float` \(float32\), but the array's dtype is float64"):
        saxpy[1, 32](8, 1.0, x.astype(np.float64), y)
    with pytest.raises(TypeError, match=r"argument `y` of `saxpy` is a pointer to `float`: pass a NumPy array of float32, not list"):
        saxpy[1, 32](8, 1.0, x, [0.0] * 8)
    with pytest.raises(TypeError, match=r"argument `n` of `saxpy` is a `int` scalar \(int32\): pass an integer, not float"):
        saxpy[1, 32](8.0, 1.0, x, y)
    with pytest.raises(TypeError, match=r"argument `n` of `saxpy` is a `int` scalar \(int32\), not an array"):
        saxpy[1, 32](np.zeros(2, np.int32), 1.0, x, y)
    with pytest.raises(ValueError, match=r"argument `n` of `saxpy`: 4294967296 does not fit in `int`"):
        saxpy[1, 32](2**32, 1.0, x, y)
    # A float too large for `float` is refused, as the command line refuses it; an infinity
    # passed as one is kept.
    with pytest.raises(ValueError, match=r"argument `a` of `saxpy`: 1e\+300 does not fit in `float` \(its finite values lie within"):
        saxpy[1, 32](8, 1e300, x, y)
    with pytest.raises(ValueError, match=r"argument `a` of `saxpy`: 1000000000000000000000000000000000000000 does not fit in `float`"):
        saxpy[1, 32](8, 10**39, x, y)
    with pytest.raises(ValueError, match=r"argument `a` of `saxpy`: 1000000000*0 does not fit in `float`"):
        saxpy[1, 32](8, 10**400, x, y)
    saxpy[1, 32](8, math.inf, x, y)
    with pytest.raises(TypeError, match=r"argument `a` of `saxpy` is a `float` scalar \(float32\): pass a number, not a bool"):
        saxpy[1, 32](8, True, x, y)
    with pytest.raises(TypeError, match=r"no parameter `z`"):
        saxpy[1, 32](8, 1.0, x, y, z=1)
    with pytest.raises(ValueError, match=r"grid extents must be from 1"):
        saxpy[0, 32](8, 1.0, x, y)
    with pytest.raises(TypeError, match=r"launch `saxpy` as saxpy\[grid, block\]"):
        saxpy[1](8, 1.0, x, y)
    with pytest.raises(TypeError, match=r"is a Prism kernel: launch it as"):
        grid_dot(1, x, x, x, x)
    with pytest.raises(AttributeError, match=r"no kernel named `saxpi` \(kernels: saxpy\)"):
        prism.compile(KERNELS / "01_saxpy_grid_stride.prism").saxpi
    # The bound asks for a multiple of 32 threads per block: the shape is a ValueError.
    with pytest.raises(ValueError, match=r"multiple of 32 threads per block"):
        grid_dot[1, 48](8, x, x, np.zeros(1, np.float32), np.zeros(1, np.int32))
    with pytest.raises(TypeError, match=r"device function"):
        block_sum[1, 32]


def test_numpy_scalars_are_accepted():
    mod = prism.compile(KERNELS / "01_saxpy_grid_stride.prism")
    x = np.ones(8, np.float32)
    y = np.zeros(8, np.float32)
    mod.saxpy[1, 8](np.int64(8), np.float32(3.0), x, y)
    assert np.all(y == 3.0)


def test_warnings_are_python_warnings():
    src = (KERNELS / "01_saxpy_grid_stride.prism").read_text()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prism.compile(text=src)  # no warnings: nothing raised


# --- the GPU path -----------------------------------------------------------------------


class FakeDeviceArray:
    """Looks like a CuPy array of ``n`` floats at ``address`` to the launcher; the address
    is not real memory."""

    def __init__(self, address=0x1000, n=8):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f4", "data": (address, False), "version": 3}


# Two read-only inputs and one output: `out[i] = x[i] * y[i]`.
PRODUCT = (
    '@prism("global")\n'
    "@requires(grid[1], block[1], thread[1])\n"
    "def product(n : int, x : ptr(const(float)), y : ptr(const(float)), out : ptr(float)):\n"
    "    g : int @ thread[1] = id()\n"
    "    with partition(out, p=thread[1], f=lambda i: g + i) as o:\n"
    "        with group(thread[1]):\n"
    "            if g < n:\n"
    "                o[0] = x[g] * y[g]\n"
)


@pytest.mark.skipif(prism.driver_present(), reason="checks the refusal on a machine without a CUDA driver")
def test_without_a_driver_cuda_launches_raise_device_error():
    saxpy = prism.compile(KERNELS / "01_saxpy_grid_stride.prism").saxpy
    x = np.zeros(8, np.float32)
    with pytest.raises(prism.DeviceError, match="no CUDA driver found"):
        saxpy.options(device="cuda")[1, 32](8, 1.0, x, x.copy())
    with pytest.raises(prism.DeviceError, match="no CUDA driver found"):
        saxpy.options(device="cuda")[1, 32](8, 1.0, FakeDeviceArray(0x1000), FakeDeviceArray(0x2000))


# The checker proves a kernel race-free assuming its pointer parameters are distinct memory
# (docs/soundness.md 4.1). With device arrays the caller picks the addresses, so a launch
# must refuse one array for two parameters the kernel writes one of, however they overlap;
# these are refused before any driver is asked, so they run on every machine.
def test_overlapping_device_arrays_are_refused_when_the_kernel_writes_one():
    saxpy = prism.compile(KERNELS / "01_saxpy_grid_stride.prism").saxpy.options(device="cuda")
    same = FakeDeviceArray(0x1000)
    with pytest.raises(ValueError, match=r"`x` and `y` overlap in device memory .*argument-alias"):
        saxpy[1, 32](8, 1.0, same, same)
    # The second half of x is the first half of y.
    with pytest.raises(ValueError, match=r"`x` and `y` overlap"):
        saxpy[1, 32](8, 1.0, FakeDeviceArray(0x1000, 8), FakeDeviceArray(0x1010, 8))
    # y ends where x starts: no overlap, so the launch goes on to look for a driver.
    if not prism.driver_present():
        with pytest.raises(prism.DeviceError, match="no CUDA driver found"):
            saxpy[1, 32](8, 1.0, FakeDeviceArray(0x1020, 8), FakeDeviceArray(0x1000, 8))
        # Two read-only parameters may share an array.
        product = prism.compile(text=PRODUCT).product.options(device="cuda")
        with pytest.raises(prism.DeviceError, match="no CUDA driver found"):
            product[1, 32](8, same, same, FakeDeviceArray(0x2000))
        with pytest.raises(ValueError, match=r"`y` and `out` overlap"):
            product[1, 32](8, FakeDeviceArray(0x3000), same, same)


def test_numpy_arrays_sharing_memory_are_refused_when_the_kernel_writes_one():
    saxpy = prism.compile(KERNELS / "01_saxpy_grid_stride.prism").saxpy
    x = np.arange(16, dtype=np.float32)
    before = x.copy()
    with pytest.raises(ValueError, match=r"`x` and `y` of `saxpy` share memory and the kernel writes `y`"):
        saxpy[1, 32](8, 2.0, x, x)
    with pytest.raises(ValueError, match=r"share memory"):
        saxpy[1, 32](8, 2.0, x[4:12], x[:8])
    # Interleaved views of one array share no element: accepted, and right.
    saxpy[1, 32](8, 2.0, x[0::2], x[1::2])
    assert np.array_equal(x[1::2], 2.0 * before[0::2] + before[1::2])
    assert np.array_equal(x[0::2], before[0::2])
    # Read-only parameters may share.
    product = prism.compile(text=PRODUCT).product
    out = np.zeros(8, np.float32)
    product[1, 32](8, x[:8], x[:8], out)
    assert np.array_equal(out, x[:8] * x[:8])
    with pytest.raises(ValueError, match=r"`y` and `out` of `product` share memory"):
        product[1, 32](8, x[:8], out, out)
    # The GPU path with host arrays refuses them too, before it looks for a driver.
    with pytest.raises(ValueError, match=r"share memory"):
        saxpy.options(device="cuda")[1, 32](8, 2.0, x, x)


def test_device_arrays_are_refused_by_the_simulator():
    saxpy = prism.compile(KERNELS / "01_saxpy_grid_stride.prism").saxpy
    with pytest.raises(TypeError, match=r"argument `x` of `saxpy` is a GPU array"):
        saxpy[1, 32](8, 1.0, FakeDeviceArray(), np.zeros(8, np.float32))


@pytest.mark.skipif(not prism.driver_present(), reason="needs a CUDA driver and a GPU")
def test_on_a_gpu_host_arrays_are_copied_there_and_back():
    mod = prism.compile(KERNELS / "01_saxpy_grid_stride.prism")
    rng = np.random.default_rng(5)
    n = 1000
    x, y = eighths(rng, n), eighths(rng, n)
    expect = np.float32(1.5) * x + y
    mod.saxpy.options(device="cuda")[3, 64](n, 1.5, x, y)
    assert np.array_equal(y, expect)


def _gpu_saxpy_in_place(lib, to_device, to_host):
    """saxpy on arrays another library owns on the GPU, updated there in place."""
    mod = prism.compile(KERNELS / "01_saxpy_grid_stride.prism")
    rng = np.random.default_rng(6)
    n = 1000
    x, y = eighths(rng, n), eighths(rng, n)
    expect = np.float32(1.5) * x + y
    dx, dy = to_device(x), to_device(y)
    mod.saxpy.options(device="cuda")[3, 64](n, 1.5, dx, dy)
    assert np.array_equal(to_host(dy), expect), lib


@pytest.mark.skipif(not prism.driver_present(), reason="needs a CUDA driver and a GPU")
def test_on_a_gpu_cupy_arrays_through_the_cuda_array_interface():
    cupy = pytest.importorskip("cupy")
    _gpu_saxpy_in_place("cupy", cupy.asarray, cupy.asnumpy)


@pytest.mark.skipif(not prism.driver_present(), reason="needs a CUDA driver and a GPU")
def test_on_a_gpu_torch_tensors_through_the_cuda_array_interface():
    torch = pytest.importorskip("torch")
    _gpu_saxpy_in_place("torch", lambda a: torch.from_numpy(a).cuda(), lambda t: t.cpu().numpy())


@pytest.mark.skipif(not prism.driver_present(), reason="needs a CUDA driver and a GPU")
def test_on_a_gpu_jax_arrays_through_dlpack():
    jax = pytest.importorskip("jax")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX sees no GPU")
    # JAX arrays are immutable: the kernel writes a CuPy array, JAX's input is read only.
    cupy = pytest.importorskip("cupy")
    mod = prism.compile(KERNELS / "01_saxpy_grid_stride.prism")
    n = 256
    x = np.arange(n, dtype=np.float32)
    dx = jax.device_put(x)
    dy = cupy.zeros(n, dtype=cupy.float32)

    class DLPackOnly:
        """Only the DLPack protocol, as JAX offers it."""

        def __init__(self, a):
            self._a = a

        def __dlpack__(self, stream=None):
            return self._a.__dlpack__()

        def __dlpack_device__(self):
            return self._a.__dlpack_device__()

    mod.saxpy.options(device="cuda")[1, 256](n, 2.0, DLPackOnly(dx), DLPackOnly(dy))
    assert np.array_equal(cupy.asnumpy(dy), 2 * x)


def test_malformed_input_raises_python_exceptions():
    for text in ["", "def", "@prism(\"global\")\n", "\t\x00\xff", "@prism(\"global\")\ndef k(x : ptr(float)):\n" + "(" * 500]:
        try:
            prism.compile(text=text)
        except prism.CompileError as e:
            assert e.diagnostics
    with pytest.raises(TypeError, match="a source or path"):
        prism.compile()
    with pytest.raises(TypeError, match="not int"):
        prism.compile(123)
    mod = prism.compile(KERNELS / "01_saxpy_grid_stride.prism")
    program = mod._program
    with pytest.raises(TypeError, match="tagged tuple"):
        program.launch("saxpy", (1, 1, 1), (32, 1, 1), [1, 2, 3, 4])
    with pytest.raises(ValueError, match="bytes do not hold an array"):
        program.launch("saxpy", (1, 1, 1), (32, 1, 1),
                       [("value", 8), ("value", 1.0), ("array", "float32", b"\0" * 7, (2,)), ("value", 0)])
    with pytest.raises(ValueError, match="no kernel named `nope`"):
        program.launch("nope", (1, 1, 1), (32, 1, 1), [])
    with pytest.raises(ValueError, match="checks="):
        mod.saxpy.options(checks="most")[1, 32](8, 1.0, np.zeros(8, np.float32), np.zeros(8, np.float32))
    with pytest.raises(TypeError, match="unknown launch option"):
        mod.saxpy.options(colour="red")
