"""``prism.std``, Prism's standard library, as Python sees it.

A Python file of kernels imports library functions the way Prism does,
``from prism.std.warp import warp_sum``. Python must be able to run that line, so each
library module exists here too; its names are placeholders (Python never calls them). The
Prism compiler reads the import line itself and checks the names against the bundled
library (``unresolved-import`` on that line for a name it does not have).
"""

import sys as _sys
import types as _types

from .._prism import std_modules as _std_modules


class _Placeholder:
    """A library function as Python sees it: a name, not callable from Python."""

    def __init__(self, module, name):
        self.__module__ = module
        self.__name__ = self.__qualname__ = name

    def __call__(self, *args, **kwargs):
        raise TypeError(f"`{self.__module__}.{self.__name__}` is a Prism library function: kernels call it")

    def __repr__(self):
        return f"<prism library function {self.__module__}.{self.__name__}>"


def _library_module(name):
    full = f"{__name__}.{name}"
    mod = _types.ModuleType(full, f"Placeholders for the Prism library module `{full}`.")

    def __getattr__(attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Placeholder(full, attr)

    mod.__getattr__ = __getattr__
    return mod


#: The library's modules (`thread`, `warp`, `block`, `device`, ...), from the bundled library.
MODULES = list(_std_modules())

for _name in MODULES:
    _mod = _library_module(_name)
    globals()[_name] = _mod
    _sys.modules[_mod.__name__] = _mod
