"""Writing what ``semcache calibrate`` chose into a ``.env`` file the cache reads.

Variable names are derived from :class:`~semcache.config.settings.CacheSettings`, never spelled
by hand; python-dotenv's ``set_key`` keeps every other line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from semcache.config.settings import CacheSettings
from semcache.errors import ConfigError


def env_name(*path: str) -> str:
    """The environment variable of the settings field at ``path`` (e.g. semantic, threshold)."""
    model: type = CacheSettings
    for part in path:
        fields = getattr(model, "model_fields", None)
        if fields is None or part not in fields:
            raise ConfigError(f"no settings field {'.'.join(path)!r} in CacheSettings")
        model = fields[part].annotation
    config = CacheSettings.model_config
    delimiter = config.get("env_nested_delimiter") or "__"
    return (str(config.get("env_prefix") or "") + delimiter.join(path)).upper()


def _set(path: str | os.PathLike[str], name: str, value: str, *, quote: bool = False) -> None:
    import dotenv

    Path(path).touch(exist_ok=True)
    dotenv.set_key(path, name, value, quote_mode="always" if quote else "never")


def save_threshold(
    path: str | os.PathLike[str], threshold: float, namespace: str | None = None
) -> None:
    """Set the semantic threshold (cosine, hit when >=), or one namespace's override, keeping
    the other namespaces' overrides."""
    if not -1.0 <= threshold <= 1.0:
        raise ConfigError(f"threshold {threshold} is not a cosine similarity in [-1, 1]")
    if namespace is None:
        _set(path, env_name("semantic", "threshold"), repr(float(threshold)))
        return
    import dotenv

    name = env_name("semantic", "namespace_thresholds")
    raw = dotenv.get_key(path, name) if Path(path).exists() else None
    try:
        overrides = json.loads(raw) if raw else {}
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: {name} is not valid JSON: {raw!r}") from exc
    if not isinstance(overrides, dict):
        raise ConfigError(f"{path}: {name} must be a JSON object, got {raw!r}")
    overrides[namespace] = float(threshold)
    _set(path, name, json.dumps(overrides, sort_keys=True), quote=True)


def save_embedder(path: str | os.PathLike[str], name: str) -> None:
    """Set the semantic embedder: a threshold only means something for its embedder."""
    _set(path, env_name("semantic", "embedder"), name)


def save_verifier(path: str | os.PathLike[str], name: str) -> None:
    """Set the answer guard the threshold was calibrated with ('none' or 'details')."""
    _set(path, env_name("semantic", "verifier"), name)


def save_scorer(path: str | os.PathLike[str], scorer_file: str | os.PathLike[str] | None) -> None:
    """Point the cache at a saved learned scorer, or (None) back to plain thresholds."""
    _set(path, env_name("semantic", "scorer"), "" if scorer_file is None else str(scorer_file))
