"""The Prism program of a decorated Python function: its source text, and its neighbours'.

A kernel written in a Python file is compiled from the file's own text, read with
``inspect`` (Python never runs the body). The program handed to the compiler is the file
with everything blanked out except:

- the kernel itself, with all its decorators;
- every ``@prism("device")`` function decorated in the same Python module so far, so the
  kernel can call them;
- the module's top-level Prism constants (``TILE : constexpr(int) = 32``) and imports of
  the standard library (``from prism.std.warp import warp_sum``).

Each piece keeps its line, so diagnostics and dynamic-check reports point at the real
lines of the Python file. A function defined inside another (a test's body) is dedented by
its own indentation; its columns are then off by that much, its lines still right. Device
functions of the module defined in another file (a notebook's other cells) are appended
after the file's text, without their constants; their lines are then not the cell's.

Decorators written through a module, ``@prism.prism("global")`` or ``@pr.requires(...)``,
are shortened to the bare name Prism reads (``@prism("global")``).
"""

from __future__ import annotations

import ast
import inspect
import linecache
import sys


def function_lines(fn) -> tuple:
    """``(file, first line, lines)`` of ``fn``'s definition, decorators included."""
    try:
        file = inspect.getsourcefile(fn) or inspect.getfile(fn)
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise OSError(
            f"cannot read the source of `{fn.__qualname__}`: Prism compiles a kernel from its "
            f"source text (inspect.getsource), so it must be defined in a file, not typed at "
            f"the interactive prompt or built with exec ({e})"
        ) from None
    # A lambda or a function without decorators starts at its `def`; both are fine.
    return file, max(start, 1), lines


def dedent(lines: list) -> list:
    """Removes the first line's indentation from every line (whitespace only), so a
    function defined inside another becomes top-level Prism."""
    first = lines[0]
    indent = first[: len(first) - len(first.lstrip(" \t"))]
    if not indent:
        return list(lines)
    out = []
    for line in lines:
        k = 0
        while k < len(indent) and k < len(line) and line[k] in " \t":
            k += 1
        out.append(line[k:])
    return out


def shorten_decorators(lines: list) -> list:
    """Rewrites ``@mod.prism(...)``/``@mod.requires(...)``/``@mod.launch_bounds(...)`` to
    the bare names the Prism parser reads."""
    try:
        tree = ast.parse("".join(lines))
    except SyntaxError:
        return lines  # The Prism parser reports it, on the right line.
    fn = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is None:
        return lines
    out = list(lines)
    # Right to left on each line, so earlier offsets stay valid.
    edits = []
    for dec in fn.decorator_list:
        node = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(node, ast.Attribute) and node.lineno == node.end_lineno:
            edits.append((node.lineno - 1, node.col_offset, node.end_col_offset, node.attr))
    for row, start, end, name in sorted(edits, reverse=True):
        raw = out[row].encode("utf-8")  # ast's offsets count UTF-8 bytes.
        out[row] = (raw[:start] + name.encode("utf-8") + raw[end:]).decode("utf-8")
    return out


def _is_constexpr(annotation) -> bool:
    node = annotation.func if isinstance(annotation, ast.Call) else annotation
    return (isinstance(node, ast.Name) and node.id == "constexpr") or (
        isinstance(node, ast.Attribute) and node.attr == "constexpr"
    )


def _is_std_import(node) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level == 0 and (node.module or "").startswith("prism.std")
    if isinstance(node, ast.Import):
        return all(a.name.startswith("prism.std") for a in node.names)
    return False


def module_text(file: str, module_globals, functions: list) -> str:
    """The Prism program: ``file``'s text with only ``functions`` (Python functions, in
    any order) and the top-level constants and standard-library imports kept."""
    lines = linecache.getlines(file, module_globals)
    if not lines:
        raise OSError(f"cannot read `{file}`, where the kernel is defined")
    lines = [line if line.endswith("\n") else line + "\n" for line in lines]
    canvas = ["\n"] * len(lines)

    def place(start: int, piece: list):
        for k, line in enumerate(piece):
            row = start - 1 + k
            if row < len(canvas):
                canvas[row] = line if line.endswith("\n") else line + "\n"

    try:
        tree = ast.parse("".join(lines))
        top = tree.body
    except SyntaxError:
        top = []
    for node in top:
        if isinstance(node, ast.AnnAssign) and _is_constexpr(node.annotation) or _is_std_import(node):
            piece = lines[node.lineno - 1 : node.end_lineno]
            if isinstance(node, ast.AnnAssign):
                piece = _shorten_constexpr(piece, node)
            place(node.lineno, piece)
    # Functions from another file (a notebook's other cells: one module, a file per cell)
    # follow the file's text, so they cannot overlap its lines; their lines are then off.
    elsewhere = []
    for fn in functions:
        fn_file, start, piece = function_lines(fn)
        piece = shorten_decorators(dedent(piece))
        if fn_file == file:
            place(start, piece)
        else:
            elsewhere += ["\n", f"# {fn.__qualname__}, from {fn_file}\n"] + [
                line if line.endswith("\n") else line + "\n" for line in piece
            ]
    return "".join(canvas + elsewhere)


def _shorten_constexpr(piece: list, node) -> list:
    """``N : prism.constexpr(int) = 4`` -> ``N : constexpr(int) = 4``."""
    ann = node.annotation.func if isinstance(node.annotation, ast.Call) else node.annotation
    if not isinstance(ann, ast.Attribute) or ann.lineno != ann.end_lineno:
        return piece
    row = ann.lineno - node.lineno
    raw = piece[row].encode("utf-8")
    out = list(piece)
    out[row] = (raw[: ann.col_offset] + b"constexpr" + raw[ann.end_col_offset :]).decode("utf-8")
    return out


def module_globals_of(fn):
    """The globals of the module ``fn`` was defined in (for ``linecache``)."""
    mod = sys.modules.get(fn.__module__)
    return mod.__dict__ if mod is not None else fn.__globals__
