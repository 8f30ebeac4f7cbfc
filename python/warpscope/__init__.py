"""warpscope: GPU profiles as Arrow tables and analysis reports.

Read a profile of any format the ``warpscope`` command reads with :func:`load` (the GIL is
released while it parses, on all cores), then take its tables as ``pyarrow.Table``s
(``events()``, ``kernels()``, ``copies()``, ``api_calls()``, ``flows()``, ``memory_records()``,
``devices()``, ``cpu_ops()``: the columns and types of ``warpscope export``'s Parquet files) and
its reports as the dicts of the command's ``--format json`` (``summary()``, ``analyze()``,
``memory()``; :func:`compare` and :func:`fleet` over several files). ``Profile.time_range``
gives a view of a range of it. See ``docs/python.md``.
"""

from ._warpscope import (
    TABLES,
    LoadError,
    Profile,
    ProfileWarning,
    WarpscopeError,
    __version__,
    compare,
    fleet,
    load,
)

__all__ = [
    "TABLES",
    "LoadError",
    "Profile",
    "ProfileWarning",
    "WarpscopeError",
    "__version__",
    "compare",
    "fleet",
    "load",
]
