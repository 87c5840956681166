"""The names of settings, derived from a settings model's declared fields.

A field declared on ``CacheSettings`` is at once a known argument path
(``semantic.threshold``), a known environment variable (``SEMCACHE_SEMANTIC__THRESHOLD``)
and a known ``.env`` key; nothing here is a written list of names. Misspelled names get the
nearest declared one.
"""

from __future__ import annotations

import difflib
import typing
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo

Path_ = tuple[str, ...]


def section_of(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds (``X`` or ``X | None``), else None."""
    candidates = typing.get_args(annotation) if typing.get_origin(annotation) else (annotation,)
    for candidate in candidates:
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def is_mapping(annotation: Any) -> bool:
    origin = typing.get_origin(annotation) or annotation
    return isinstance(origin, type) and issubclass(origin, Mapping)


def is_collection(annotation: Any) -> bool:
    """A list, tuple or set setting (pydantic-settings reads those as JSON arrays)."""
    origin = typing.get_origin(annotation) or annotation
    return isinstance(origin, type) and issubclass(origin, (list, tuple, set, frozenset))


def is_secret(annotation: Any) -> bool:
    args = typing.get_args(annotation) or (annotation,)
    return any(isinstance(arg, type) and issubclass(arg, SecretStr) for arg in args)


def setting_fields(model: type[BaseModel], base: Path_ = ()) -> Iterator[tuple[Path_, FieldInfo]]:
    """Every leaf setting of ``model`` (recursing into sections) with its field."""
    for name, field in model.model_fields.items():
        section = section_of(field.annotation)
        if section is None:
            yield (*base, name), field
        else:
            yield from setting_fields(section, (*base, name))


def field_at(model: type[BaseModel], path: Sequence[str]) -> FieldInfo | None:
    field = None
    current: type[BaseModel] | None = model
    for part in path:
        if current is None:
            return field  # a key inside a mapping field belongs to that field
        field = current.model_fields.get(part)
        if field is None:
            return None
        current = section_of(field.annotation)
    return field


def is_known_path(model: type[BaseModel], path: Sequence[str]) -> bool:
    """Whether ``path`` names a section, a setting, or a key inside a mapping setting."""
    current = model
    for depth, part in enumerate(path):
        field = current.model_fields.get(part)
        if field is None:
            return False
        section = section_of(field.annotation)
        if section is not None:
            current = section
            continue
        return depth == len(path) - 1 or is_mapping(field.annotation)
    return bool(path)


def nearest_path(model: type[BaseModel], path: Sequence[str]) -> Path_ | None:
    """The declared setting closest to the misspelled ``path``, or None if nothing is close.

    First the whole dotted path (``store_path`` -> ``store.path``), then the last part
    alone, so a setting given at the wrong level is found (``threshold`` ->
    ``semantic.threshold``).
    """
    paths = [p for p, _ in setting_fields(model)]
    paths += sorted({p[:i] for p in paths for i in range(1, len(p))})  # sections
    # a section that encloses ``path`` is no answer: the user already wrote it
    dotted = {".".join(p): p for p in paths if tuple(path[: len(p)]) != p}
    wanted = ".".join(path)
    close = difflib.get_close_matches(wanted, list(dotted), n=1, cutoff=0.75)
    if close:
        return dotted[close[0]]
    by_last: dict[str, list[str]] = {}
    for text, p in dotted.items():
        by_last.setdefault(p[-1], []).append(text)
    names = difflib.get_close_matches(path[-1], list(by_last), n=1, cutoff=0.75)
    if names:
        return dotted[difflib.get_close_matches(wanted, by_last[names[0]], n=1, cutoff=0)[0]]
    close = difflib.get_close_matches(wanted, list(dotted), n=1, cutoff=0.6)
    return dotted[close[0]] if close else None


def _naming(model: type[BaseModel]) -> tuple[str, str]:
    config = model.model_config
    return str(config.get("env_prefix") or ""), str(config.get("env_nested_delimiter") or "__")


def variable_name(model: type[BaseModel], path: Sequence[str]) -> str:
    """The environment variable of a setting: ``SEMCACHE_SEMANTIC__THRESHOLD``."""
    prefix, delimiter = _naming(model)
    return (prefix + delimiter.join(path)).upper()


def variable_path(model: type[BaseModel], name: str) -> Path_ | None:
    """The setting path a variable names (case-insensitive), or None without the prefix."""
    prefix, delimiter = _naming(model)
    if not prefix or not name.lower().startswith(prefix.lower()):
        return None
    rest = name[len(prefix) :].lower()
    return tuple(rest.split(delimiter)) if rest else ()


def is_settings_variable(model: type[BaseModel], name: str) -> bool:
    """Whether ``name`` carries the prefix and names a known setting (or section)."""
    path = variable_path(model, name)
    return path is not None and is_known_path(model, path)


def field_path(model: type[BaseModel], path: Path_) -> Path_:
    """The prefix of ``path`` that names declared fields (keys of a mapping dropped)."""
    current: type[BaseModel] | None = model
    for depth, part in enumerate(path):
        if current is None or part not in current.model_fields:
            return path[:depth]
        current = section_of(current.model_fields[part].annotation)
    return path
