"""Small helpers every embedder shares: input checks, device choice, optional imports."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, Generic, TypeVar, cast

from semcache.errors import ConfigError, MissingDependency

T = TypeVar("T")

DEVICE_KINDS = ("auto", "cpu", "cuda", "mps")
PRECISIONS = ("auto", "float32", "float16", "bfloat16")


def as_text_list(texts: Sequence[str]) -> list[str]:
    """The texts as a list, refusing a bare ``str`` (a sequence of characters, never meant)."""
    if isinstance(texts, str):
        raise TypeError("embed() takes a sequence of texts, not a single str; wrap it in a list")
    texts = list(texts)
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{index}] is {type(text).__name__}, expected str")
    return texts


def check_batch_size(batch_size: int) -> int:
    """A batch size of at least one (zero would never make progress)."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigError(f"batch_size must be an int >= 1, got {batch_size!r}")
    return batch_size


def check_device(device: str) -> str:
    """Validate a device string early, so a typo fails at construction, not on first use."""
    kind, _, index = device.partition(":")
    if kind not in DEVICE_KINDS or (index and (kind != "cuda" or not index.isdigit())):
        raise ConfigError(
            f"device {device!r} is not one of {', '.join(DEVICE_KINDS)} (or cuda:<index>)"
        )
    return device


def check_precision(precision: str) -> str:
    """One of :data:`PRECISIONS`, checked at construction like the device."""
    if precision not in PRECISIONS:
        raise ConfigError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    return precision


def resolve_device(device: str) -> str:
    """``"auto"`` becomes cuda, then mps, then cpu, whichever torch can use; others pass through."""
    if check_device(device) != "auto":
        return device
    torch: Any = import_optional("torch", package="torch", extra="local")

    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "mps"
    return "cpu"


def import_optional(module: str, *, package: str, extra: str) -> ModuleType:
    """Import an optional dependency, or raise :class:`MissingDependency` naming the extra."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name != module and not module.startswith(exc.name + "."):
            raise  # the package is there but one of its own imports is broken: show that
        raise MissingDependency(package, extra) from exc


class Lazy(Generic[T]):
    """A value built on first use, exactly once even under concurrent first calls.

    ``lock`` is also held while building, so an embedder can use it to serialise calls
    into a model that is not safe to call from two threads at once.
    """

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._value: T | None = None
        self._built = False
        self.lock = threading.RLock()

    def get(self) -> T:
        if not self._built:
            with self.lock:
                if not self._built:
                    self._value = self._build()
                    self._built = True
        return cast(T, self._value)
