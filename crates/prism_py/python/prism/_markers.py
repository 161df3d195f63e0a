"""Names that let Python evaluate a Prism signature without knowing what it means.

Python never runs a kernel's body, but it does evaluate the decorators and the parameter
annotations when the ``def`` statement runs: ``@requires(grid[1], block[1], thread[32])``
and ``def k(x : ptr(const(float)) @ grid[1], n : int @ block[1])``. Each name here is a
marker that accepts calls, subscripts and ``@`` on either side, and remembers the text it
stands for (so ``k.__annotations__`` reads like the source). What the annotations mean is
decided by the Prism compiler, which reads the function's source text.

Builtin types need nothing: ``int @ thread[1]`` works because the marker on the right takes
the ``@``. One thing Python cannot evaluate is a subscripted builtin, ``float[4]`` in a
parameter's annotation (``shared(float[n])``, ``tensor_map(float[64][64])``); write
``from __future__ import annotations`` at the top of such a file (annotations are then
never evaluated), or use the marker types (``half``, ``bf16``, ``double``, ...), which
subscript fine.
"""

from __future__ import annotations


class Marker:
    """A piece of Prism signature syntax, evaluated by Python and kept as text."""

    __slots__ = ("_text",)

    def __init__(self, text: str):
        self._text = text

    def __call__(self, *args, **kwargs) -> "Marker":
        parts = [_show(a) for a in args] + [f"{k}={_show(v)}" for k, v in kwargs.items()]
        return Marker(f"{self._text}({', '.join(parts)})")

    def __getitem__(self, index) -> "Marker":
        if isinstance(index, tuple):
            return Marker(f"{self._text}[{', '.join(_show(i) for i in index)}]")
        return Marker(f"{self._text}[{_show(index)}]")

    def __matmul__(self, other) -> "Marker":
        return Marker(f"{self._text} @ {_show(other)}")

    def __rmatmul__(self, other) -> "Marker":
        return Marker(f"{_show(other)} @ {self._text}")

    def __repr__(self) -> str:
        return self._text

    def __eq__(self, other) -> bool:
        return isinstance(other, Marker) and other._text == self._text

    def __hash__(self) -> int:
        return hash(self._text)


def _show(x) -> str:
    if isinstance(x, type):
        return x.__name__
    return repr(x)


# Levels of the perspective order (`grid[1]`, `warp[2]`, ...).
grid = Marker("grid")
block = Marker("block")
warpgroup = Marker("warpgroup")
warp = Marker("warp")
thread = Marker("thread")

# Type constructors.
ptr = Marker("ptr")
const = Marker("const")
shared = Marker("shared")
tensor_map = Marker("tensor_map")
constexpr = Marker("constexpr")

# Scalar types that are not Python builtins (`int`, `float` and `bool` are).
half = Marker("half")
bf16 = Marker("bf16")
double = Marker("double")
uint = Marker("uint")
int64 = Marker("int64")
uint64 = Marker("uint64")

#: Every marker, by name.
MARKERS = {
    name: value
    for name, value in dict(globals()).items()
    if isinstance(value, Marker)
}
