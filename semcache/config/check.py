"""Unknown and invalid settings as one line each, named where the user wrote them.

Pure functions (the caller passes the environment and ``.env``), shared by the settings
class, the CLI and the proxy. An argument is named by its dotted path, a variable or ``.env``
key by its name; values of secret fields are never repeated.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, SecretStr, ValidationError

from semcache.config.names import (
    Path_,
    field_at,
    field_path,
    is_collection,
    is_known_path,
    is_mapping,
    is_secret,
    nearest_path,
    section_of,
    variable_name,
    variable_path,
)

Origin = Literal["argument", "environment", "dotenv"]

#: pydantic error types whose message reads better as "expected <op> <limit>".
_BOUNDS = {
    "greater_than": ">",
    "greater_than_equal": ">=",
    "less_than": "<",
    "less_than_equal": "<=",
}
_HIDDEN = "'**********'"


@dataclass(frozen=True, slots=True)
class SettingProblem:
    """One unknown or invalid setting, named where the user wrote it.

    ``name``: the argument's dotted path, or the variable / ``.env`` key; ``path``: the setting's
    path in the model; ``setting``: the dotted path when ``name`` holds an enclosing section as
    JSON, else None; ``value``: as given (``repr``), None when withheld; ``suggestion``: the
    nearest valid name, spelled like ``name``.
    """

    origin: Origin
    kind: Literal["unknown", "invalid"]
    name: str
    path: Path_
    setting: str | None = None
    value: str | None = None
    expected: str | None = None
    suggestion: str | None = None
    file: str | None = None

    def line(self) -> str:
        """The problem as one line of text."""
        shown = "" if self.value is None or self.kind == "unknown" else f"={self.value}"
        where = {
            "argument": f"setting `{self.name}`{shown}",
            "environment": f"environment variable `{self.name}`{shown}",
            "dotenv": f"key `{self.name}`{shown} in .env file {self.file!r}",
        }[self.origin]
        if self.kind == "unknown":
            text = f"unknown {where}"
            if self.setting is not None:
                text = f"{where} sets unknown setting `{self.setting}`"
            hint = f"did you mean `{self.suggestion}`?" if self.suggestion else "no similar setting"
            return f"{text}; {hint}"
        inner = "" if self.setting is None else f" (`{self.setting}`)"
        return f"{where}{inner}: {self.expected}"

    def under(self, prefix: str) -> SettingProblem:
        """The same problem for settings nested under ``prefix`` (e.g. a config file's
        ``cache.``); names of variables do not change."""
        if self.origin != "argument":
            return self
        suggestion = None if self.suggestion is None else prefix + self.suggestion
        return replace(self, name=prefix + self.name, suggestion=suggestion)


def unknown_variables(
    model: type[BaseModel],
    variables: Mapping[str, Any],
    *,
    origin: Literal["environment", "dotenv"],
    file: str | None = None,
    other: Collection[str] = (),
) -> list[SettingProblem]:
    """A problem for every prefixed variable in ``variables`` that names no setting.

    ``other`` lists prefixed names the caller reads for its own purpose (not settings).
    """
    others = {name.upper() for name in other}
    problems = []
    for name in variables:
        path = variable_path(model, name)
        if path is None or name.upper() in others or is_known_path(model, path):
            continue
        near = nearest_path(model, path) if path else None
        problems.append(
            SettingProblem(
                origin=origin,
                kind="unknown",
                name=name,
                path=path,
                suggestion=None if near is None else variable_name(model, near),
                file=file,
            )
        )
    return problems


def unknown_settings_variables(
    model: type[BaseModel],
    environ: Mapping[str, str],
    dotenv: Mapping[str, tuple[str, str | None]],
    *,
    other: Collection[str] = (),
) -> list[SettingProblem]:
    """Unknown prefixed names among the environment's variables and the ``.env`` keys
    (``dotenv`` as :func:`read_dotenv` returns it)."""
    problems = unknown_variables(model, environ, origin="environment", other=other)
    for name, (file, _) in dotenv.items():
        problems += unknown_variables(model, {name: None}, origin="dotenv", file=file, other=other)
    return problems


def read_dotenv(files: Any, encoding: str | None = None) -> dict[str, tuple[str, str | None]]:
    """Every key of the ``.env`` file(s) pydantic-settings would read: name -> (file, value).

    ``files`` is what ``env_file`` accepts (None, a path, or a sequence; later files win).
    """
    if files is None:
        return {}
    if isinstance(files, str | os.PathLike):
        files = [files]
    from dotenv import dotenv_values  # a pydantic-settings dependency

    found: dict[str, tuple[str, str | None]] = {}
    for file in files:
        path = Path(file).expanduser()
        if path.is_file():
            values = dotenv_values(path, encoding=encoding or "utf-8")
            found.update({name: (str(file), value) for name, value in values.items()})
    return found


# -- validation errors as problems -----------------------------------------------------------


def _expected(error: Mapping[str, Any]) -> str:
    """What pydantic wanted, as the end of "...: expected <this>"."""
    kind, context = error["type"], error.get("ctx") or {}
    if kind in _BOUNDS:
        limit = next(iter(context.values()), "")
        shown = f"{limit:g}" if isinstance(limit, int | float) else limit
        return f"expected a number {_BOUNDS[kind]} {shown}"
    message = str(error["msg"])
    if message.startswith("Value error, "):
        return message.removeprefix("Value error, ")
    if message.startswith("Input should be "):
        message = message.removeprefix("Input should be ").split(", unable")[0]
        return f"expected {message}"
    return message[:1].lower() + message[1:]


def _walk(data: Any, path: Sequence[str]) -> tuple[bool, Any]:
    for part in path:
        if not isinstance(data, Mapping) or part not in data:
            return False, None
        data = data[part]
    return True, data


def _show(value: Any, secret: bool) -> str:
    if secret:
        return _HIDDEN
    if isinstance(value, SecretStr):
        return _HIDDEN
    return repr(value)


def _lower_index(variables: Mapping[str, Any]) -> dict[str, str]:
    return {name.lower(): name for name in variables}


def _locate(
    model: type[BaseModel],
    path: Path_,
    arguments: Mapping[str, Any],
    environ: Mapping[str, str],
    dotenv: Mapping[str, tuple[str, str | None]],
) -> tuple[Origin, str, Any, str | None]:
    """Where the value at ``path`` came from: (origin, name, raw value, .env file).

    Precedence is pydantic-settings': arguments, then the environment, then ``.env``. A
    variable may hold the whole path or an enclosing section as JSON.
    """
    given, value = _walk(arguments, path)
    if given:
        return "argument", ".".join(path), value, None
    for source, index in (("environment", environ), ("dotenv", dotenv)):
        lowered = _lower_index(index)
        for depth in range(len(path), 0, -1):
            name = lowered.get(variable_name(model, path[:depth]).lower())
            if name is None:
                continue
            if source == "environment":
                return "environment", name, environ[name], None
            file, raw = dotenv[name]
            return "dotenv", name, raw, file
    return "argument", ".".join(path), None, None


@dataclass(frozen=True, slots=True)
class _Failure:
    path: Path_
    unknown: bool
    expected: str | None
    shown: str | None  # the argument's value as shown, when it was an argument


def _failures(model: type[BaseModel], exc: ValidationError) -> Iterator[_Failure]:
    """The errors of ``exc`` as paths under ``model`` (a nested section's own ``SettingsError`` is
    unpacked under the section's location).
    """
    from semcache.errors import SettingsError  # errors.py imports this module's types

    for error in exc.errors(include_url=False):
        loc = tuple(str(part) for part in error["loc"])
        nested = (error.get("ctx") or {}).get("error")
        if isinstance(nested, SettingsError):
            for problem in nested.problems:
                unknown = problem.kind == "unknown"
                yield _Failure((*loc, *problem.path), unknown, problem.expected, problem.value)
            continue
        field = field_at(model, loc)
        secret = field is not None and is_secret(field.annotation)
        unknown = error["type"] == "extra_forbidden"
        expected = None if unknown else _expected(error)
        yield _Failure(loc, unknown, expected, _show(error.get("input"), secret))


def validation_problems(
    model: type[BaseModel],
    exc: ValidationError,
    *,
    arguments: Mapping[str, Any],
    environ: Mapping[str, str] | None = None,
    dotenv: Mapping[str, tuple[str, str | None]] | None = None,
) -> list[SettingProblem]:
    """One problem per error of ``exc`` (raised validating ``model``), named at its source."""
    environ, dotenv = environ or {}, dotenv or {}
    problems = []
    for failure in _failures(model, exc):
        path = failure.path
        origin, name, raw, file = _locate(model, path, arguments, environ, dotenv)
        whole = origin == "argument" or name.lower() == variable_name(model, path).lower()
        setting = None if whole else ".".join(path)
        if failure.unknown:
            near = nearest_path(model, path)
            suggestion = None
            if near is not None:
                suggestion = (
                    ".".join(near)
                    if setting is not None or origin == "argument"
                    else (variable_name(model, near))
                )
            problems.append(
                SettingProblem(origin, "unknown", name, path, setting, None, None, suggestion, file)
            )
            continue
        if origin == "argument":
            shown = failure.shown
        else:
            field = field_at(model, path)
            shown = _show(raw, field is not None and is_secret(field.annotation))
        problems.append(
            SettingProblem(
                origin, "invalid", name, path, setting, shown, failure.expected, None, file
            )
        )
    return problems


def undecodable_variables(
    model: type[BaseModel],
    environ: Mapping[str, str],
    dotenv: Mapping[str, tuple[str, str | None]],
) -> list[SettingProblem]:
    """Variables whose value must be JSON (a section or a mapping setting) and is not.

    pydantic-settings reports these only as "error parsing value for field ..."; this finds
    the variables behind it.
    """
    problems = []
    sources: list[tuple[Origin, Mapping[str, Any]]] = [("environment", environ), ("dotenv", dotenv)]
    for origin, variables in sources:
        for name in variables:
            path = variable_path(model, name)
            if not path or not is_known_path(model, path):
                continue
            field = field_at(model, path)
            if field is None:
                continue
            annotation = field.annotation
            array = is_collection(annotation)
            whole = section_of(annotation) is not None or is_mapping(annotation) or array
            if not whole or len(path) != len(field_path(model, path)):
                continue
            raw = environ[name] if origin == "environment" else dotenv[name][1]
            try:
                json.loads(raw or "")
            except ValueError:
                file = None if origin == "environment" else dotenv[name][0]
                expected = "expected a JSON array" if array else "expected a JSON object"
                problems.append(
                    SettingProblem(
                        origin, "invalid", name, path, None, repr(raw), expected, file=file
                    )
                )
    return problems


class SettingsSection(BaseModel):
    """A group of settings: unknown keys are refused, errors are :class:`SettingsError`.

    Every section mounted in ``CacheSettings`` (including ``privacy`` and ``compression``,
    which live beside their packages) derives from it.
    """

    model_config = ConfigDict(extra="forbid")

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            from semcache.errors import SettingsError  # errors.py imports this module's types

            raise SettingsError(validation_problems(type(self), exc, arguments=data)) from None
