"""``import lancedb`` without running its REST namespace client's package ``__init__`` (ADR-0125).

lancedb imports ``lance_namespace``, which imports only the request and response *models* of
``lance_namespace_urllib3_client``; but that package's ``__init__`` first imports every generated API
class, 1.2–2.3 s of the 2.2–3.5 s that ``import lancedb`` costs here (``python -X importtime``), in every
sync process and daemon. vaultsync opens local folders only, and never calls the REST client.

So :func:`import_lancedb` registers the client package as a module whose ``__path__`` is the real one
but whose ``__init__`` has not run: its submodules (the models) import as usual, and the first read of
any other attribute of the package runs the real ``__init__`` once, in place, so a caller that does use
the REST client gets it whole. Where the package is absent, already imported, or not a package, nothing
is changed.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from types import ModuleType
from typing import Any

REST_CLIENT = "lance_namespace_urllib3_client"
_LOCK = threading.RLock()


def import_lancedb() -> ModuleType:
    """The ``lancedb`` module, imported with the REST client's ``__init__`` deferred (see above)."""
    with _LOCK:
        if "lancedb" not in sys.modules:
            _defer_init(REST_CLIENT)
    import lancedb

    return lancedb


def _defer_init(name: str) -> None:
    if name in sys.modules:
        return
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    package = importlib.util.module_from_spec(spec)
    loader, state = spec.loader, {"ran": False, "done": False}

    def __getattr__(attribute: str) -> Any:  # noqa: N807 (PEP 562: a module's attribute fallback)
        with _LOCK:  # another thread waits here until the __init__ has run
            if not state["ran"]:
                state["ran"] = True
                try:
                    loader.exec_module(package)
                except BaseException:
                    sys.modules.pop(name, None)  # as a failed import leaves it
                    raise
                finally:
                    if package.__dict__.get("__getattr__") is __getattr__:  # (not the package's own)
                        del package.__dict__["__getattr__"]
                    state["done"] = True
            if state["done"]:
                return getattr(package, attribute)
        # read by the __init__ itself before it set it, as from a module still importing
        raise AttributeError(f"partially initialised module {name!r} has no attribute {attribute!r}")

    package.__getattr__ = __getattr__  # type: ignore[method-assign]
    sys.modules[name] = package
