"""Decorated kernels, compiled modules and launches.

``@prism("global")`` turns a Python function into a :class:`Function`: Python never calls
its body; the function's source (and its module's device functions, constants and
standard-library imports, see ``_source.py``) is compiled on first launch, or by
``.compile()``. ``prism.compile(...)`` compiles ``.prism`` text or files into a
:class:`Module`, whose kernels are its attributes. Either way a kernel launches as
``kernel[grid, block](*args)``.
"""

from __future__ import annotations

import functools
import os
import warnings

from . import _launch, _prism, _source
from ._errors import CompileError, CompileWarning, records

_KINDS = ("global", "device")

#: Every decorated function, by module then name: a kernel is compiled with the device
#: functions of its module (the latest definition of each name, as Python binds it).
_REGISTRY: dict = {}

_DEFAULT_OPTIONS = {"device": "sim", "checks": "all", "seed": None, "fuel": None, "stall_limit": None}


def prism(kind):
    """``@prism("global")`` marks a kernel, ``@prism("device")`` a device function.

    The decorated function is not callable from Python: a kernel is launched with
    ``kernel[grid, block](*args)``, a device function is called by kernels.
    """
    if callable(kind) and not isinstance(kind, str):
        raise TypeError('use @prism("global") for a kernel or @prism("device") for a device function')
    if kind not in _KINDS:
        raise ValueError(f'@prism({kind!r}): expected "global" (a kernel) or "device" (a device function)')

    def decorate(fn):
        if isinstance(fn, Function):
            raise TypeError(f"`{fn.__name__}` is decorated with @prism twice")
        f = Function(fn, kind)
        _REGISTRY.setdefault(fn.__module__, {})[fn.__name__] = f
        return f

    return decorate


def requires(*entries, **options):
    """``@requires(grid[1], block[1], thread[32], smem=1024)``: the perspective bound.

    Prism reads it from the source; in Python it changes nothing."""
    return _unchanged


def launch_bounds(*args, **kwargs):
    """``@launch_bounds(256)``: the most threads per block. Read from the source by Prism."""
    return _unchanged


def _unchanged(fn):
    return fn


class Param:
    """A kernel parameter: its ``name``, ``kind`` (``scalar``, ``pointer``, ``tensor_map``
    or ``opaque``) and ``dtype`` (NumPy's name of its type or element type)."""

    __slots__ = ("name", "kind", "dtype")

    def __init__(self, name, kind, dtype):
        self.name, self.kind, self.dtype = name, kind, dtype

    def __repr__(self):
        return f"Param({self.name!r}, {self.kind!r}, {self.dtype!r})"


class Kernel:
    """A compiled kernel: ``kernel[grid, block](*args)`` runs it.

    ``grid`` and ``block`` are ints or tuples of up to three ints (``(x, y, z)``). Arrays
    are NumPy arrays (updated in place), scalars Python or NumPy numbers. Launch options
    come from :meth:`options`.
    """

    def __init__(self, module, name, file, line, params, options=None):
        self.module = module
        self.name = name
        self.file = file
        self.line = line
        self.params = params
        self._options = dict(options or _DEFAULT_OPTIONS)

    def options(self, **options) -> "Kernel":
        """A copy launching with other options: ``device`` (``"sim"``, the default, or
        ``"cuda"``), ``checks`` (``"all"``, ``"races"``, ``"uniformity"`` or ``"none"``),
        ``seed`` (a randomised schedule), ``fuel`` (most warp instructions per block),
        ``stall_limit`` (seconds without progress before a run stops; 0 never)."""
        unknown = sorted(set(options) - set(_DEFAULT_OPTIONS))
        if unknown:
            raise TypeError(f"unknown launch option(s) {', '.join(unknown)}; known: {', '.join(_DEFAULT_OPTIONS)}")
        if options.get("device", "sim") not in ("sim", "cuda"):
            raise ValueError(f"device={options['device']!r}: expected 'sim' or 'cuda'")
        merged = dict(self._options)
        merged.update(options)
        return Kernel(self.module, self.name, self.file, self.line, self.params, merged)

    def __getitem__(self, launch):
        if not isinstance(launch, tuple) or len(launch) != 2:
            raise TypeError(f"launch `{self.name}` as {self.name}[grid, block](...), with two sizes")
        grid = _launch.dim3(launch[0], "grid")
        block = _launch.dim3(launch[1], "block")
        return functools.partial(self._run, grid, block)

    def __call__(self, *args, **kwargs):
        raise TypeError(f"`{self.name}` is a Prism kernel: launch it as {self.name}[grid, block](...)")

    def _run(self, grid, block, *args, **kwargs):
        args = self._bind(args, kwargs)
        program = self.module._program
        if self._options["device"] == "cuda":
            _launch.run_cuda(program, self, grid, block, args, self._options)
        else:
            _launch.run_sim(program, self, grid, block, args, self._options)

    def _bind(self, args, kwargs) -> list:
        """Arguments in parameter order, from positions and parameter names."""
        if not kwargs:
            return list(args)
        names = [p.name for p in self.params]
        bound = list(args) + [_MISSING] * max(0, len(names) - len(args))
        for k, v in kwargs.items():
            if k not in names:
                raise TypeError(f"`{self.name}` has no parameter `{k}` (its parameters: {', '.join(names)})")
            i = names.index(k)
            if i < len(args):
                raise TypeError(f"argument `{k}` of `{self.name}` is given twice")
            bound[i] = v
        missing = [n for n, v in zip(names, bound) if v is _MISSING]
        if missing:
            raise TypeError(f"`{self.name}` is missing argument(s) {', '.join(missing)}")
        return bound

    def __repr__(self):
        params = ", ".join(f"{p.name}: {p.dtype or p.kind}" for p in self.params)
        return f"<prism kernel {self.name}({params}) at {self.file}:{self.line}>"


_MISSING = object()


class Module:
    """A compiled program. Its kernels are attributes (``mod.saxpy``) and items
    (``mod["saxpy"]``); ``mod.kernels`` lists their names; ``mod.cuda()`` is the generated
    CUDA C++."""

    def __init__(self, program):
        self._program = program
        self._kernels = {}
        for name, file, line, params in program.kernels():
            self._kernels[name] = Kernel(self, name, file, line, [Param(*p) for p in params])

    @property
    def kernels(self) -> list:
        return list(self._kernels)

    def __getitem__(self, name) -> Kernel:
        try:
            return self._kernels[name]
        except KeyError:
            raise KeyError(f"no kernel named `{name}` (kernels: {', '.join(self._kernels) or 'none'})") from None

    def __getattr__(self, name) -> Kernel:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._kernels[name]
        except KeyError:
            raise AttributeError(
                f"no kernel named `{name}` (kernels: {', '.join(self._kernels) or 'none'})"
            ) from None

    def __dir__(self):
        return list(super().__dir__()) + list(self._kernels)

    def cuda(self) -> str:
        """The generated CUDA C++ (what ``prism build`` writes)."""
        return self._program.cuda()

    def __repr__(self):
        return f"<prism module: {', '.join(self._kernels) or 'no kernels'}>"


def _define_text(name, value) -> str:
    """``NAME=VALUE`` for a define, as ``prism build -D`` takes it."""
    if not isinstance(name, str):
        raise TypeError(f"defines= names must be str, not {type(name).__name__}")
    # bool before int: True is an int in Python, and a Prism `True` here.
    if isinstance(value, bool):
        return f"{name}={value}"
    if isinstance(value, int):
        return f"{name}={value}"
    if isinstance(value, float):
        return f"{name}={value!r}"
    raise TypeError(f"defines={{{name!r}: ...}} takes an int, a float or a bool, not {type(value).__name__}")


def _compile_text(name, text, include=(), arch="sm_90a", smem_limit=None, fp_contract=True, defines=None) -> Module:
    include = [os.fspath(d) for d in include]
    defines = [_define_text(k, v) for k, v in (defines or {}).items()]
    program, rendered, json_lines = _prism.compile(name, text, include, arch, smem_limit, fp_contract, defines)
    if program is None:
        raise CompileError(rendered, records(json_lines))
    if json_lines.strip():
        warnings.warn(CompileWarning(rendered), stacklevel=3)
    return Module(program)


def compile(source=None, *, path=None, text=None, name=None, include=(), arch="sm_90a", smem_limit=None,
            fp_contract=True, defines=None) -> Module:
    """Compiles Prism source into a :class:`Module`.

    ``compile("kernels/saxpy.prism")`` or ``compile(pathlib.Path(...))`` reads a file;
    ``compile("@prism(\\"global\\")\\ndef k(...): ...")`` compiles text (a string with a
    newline, or not ending in ``.prism``). ``path=`` and ``text=`` say which explicitly.
    Imports are looked for in the file's directory, then in each of ``include``;
    ``prism.std.*`` is the bundled standard library. ``arch`` sets the target
    (``sm_80``, ``sm_90a``, ...), ``smem_limit`` overrides its shared memory per block,
    ``fp_contract=False`` turns off fusing multiply-adds, and ``defines={"TILE": 64}``
    replaces the file's ``constexpr`` values as ``prism build -D TILE=64`` does.

    Raises :class:`CompileError` (with the diagnostics) when the program has errors, and
    warns :class:`CompileWarning` when it has warnings only.
    """
    given = [x is not None for x in (source, path, text)]
    if sum(given) != 1:
        raise TypeError("prism.compile takes one of: a source or path, path=..., text=...")
    if source is not None:
        if isinstance(source, os.PathLike):
            path = source
        elif isinstance(source, str):
            if "\n" not in source and source.strip().endswith(".prism"):
                path = source
            else:
                text = source
        else:
            raise TypeError(f"prism.compile takes Prism text or a path, not {type(source).__name__}")
    if path is not None:
        path = os.fspath(path)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        name = name or path
    elif not isinstance(text, str):
        raise TypeError(f"text= must be a str, not {type(text).__name__}")
    return _compile_text(name or "<string>", text, include, arch, smem_limit, fp_contract, defines)


class Function:
    """A function decorated with ``@prism(...)``. A kernel launches as
    ``fn[grid, block](*args)``; ``fn.compile()`` compiles it (with its module's device
    functions) into a :class:`Module`; ``fn.source()`` is the Prism text compiled."""

    def __init__(self, fn, kind):
        functools.update_wrapper(self, fn)
        self.kind = kind
        self._fn = fn
        self._cache = {}

    def source(self) -> str:
        """The program compiled for this function: its file, with only the Prism parts."""
        group = [
            f._fn
            for f in _REGISTRY.get(self._fn.__module__, {}).values()
            if f.kind == "device" and f is not self
        ]
        group.append(self._fn)
        file, _, _ = _source.function_lines(self._fn)
        return _source.module_text(file, _source.module_globals_of(self._fn), group)

    def compile(self, **options) -> Module:
        """Compiles the function's program (see :func:`compile` for the options)."""
        file, _, _ = _source.function_lines(self._fn)
        text = self.source()
        key = (text, tuple(sorted((k, repr(v)) for k, v in options.items())))
        if key not in self._cache:
            self._cache[key] = _compile_text(file, text, **options)
        return self._cache[key]

    def options(self, **options) -> Kernel:
        """The compiled kernel with launch options (see :meth:`Kernel.options`)."""
        return self._kernel().options(**options)

    def _kernel(self) -> Kernel:
        if self.kind != "global":
            raise TypeError(
                f"`{self.__name__}` is a device function: kernels call it; only @prism(\"global\") "
                f"functions are launched"
            )
        return self.compile()[self.__name__]

    def __getitem__(self, launch):
        return self._kernel()[launch]

    def __call__(self, *args, **kwargs):
        if self.kind == "global":
            raise TypeError(f"`{self.__name__}` is a Prism kernel: launch it as {self.__name__}[grid, block](...)")
        raise TypeError(f"`{self.__name__}` is a Prism device function: kernels call it, Python cannot")

    def __repr__(self):
        return f"<prism {self.kind} function {self.__qualname__}>"
