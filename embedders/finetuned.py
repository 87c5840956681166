"""The identity of a model directory written by ``semcache finetune``.

Its :data:`MANIFEST` records :func:`weights_digest` of the model's files, and the embedder's
name is built from that digest, not the path: two fine-tunes never share a name, while a
copy elsewhere keeps its name and entries. The digest is checked again at load.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from semcache.errors import ConfigError

MANIFEST = "semcache-finetune.json"
HELD_OUT = "heldout.jsonl"
NAME_PREFIX = "finetuned:"
FORMAT = 1

#: Files that do not change the vectors: semcache's own records and the model card.
NOT_WEIGHTS = frozenset({MANIFEST, HELD_OUT, "README.md"})

_DIGEST_VERSION = "semcache-weights-v1"
_NAME_DIGITS = 16


def weights_digest(directory: Path) -> str:
    """SHA-256 over every file of ``directory`` (recursively) except :data:`NOT_WEIGHTS`:
    canonical JSON of ``[version, [[relative path, file sha256], ...]]``, paths sorted."""
    files = []
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        relative = path.relative_to(directory).as_posix()
        if relative in NOT_WEIGHTS:
            continue
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        files.append([relative, digest.hexdigest()])
    canonical = json.dumps([_DIGEST_VERSION, files], separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def read_manifest(directory: Path) -> dict[str, Any] | None:
    """The manifest of ``directory``, or None when it has none (not a fine-tune).

    Raises :class:`~semcache.errors.ConfigError` naming the file when it is unreadable or
    lacks a ``model_id``: such a directory must not fall back to a path-based name.
    """
    path = directory / MANIFEST
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: unreadable fine-tune manifest: {exc}") from exc
    if not isinstance(manifest, dict):
        raise ConfigError(f"{path}: a fine-tune manifest is a JSON object")
    model_id = manifest.get("model_id")
    if not isinstance(model_id, str) or len(model_id) != 64:
        raise ConfigError(f"{path}: field 'model_id' must be a 64-digit SHA-256 hex digest")
    return manifest


def finetuned_name(model_id: str) -> str:
    """The embedder name of the fine-tune whose weights digest is ``model_id``."""
    return NAME_PREFIX + model_id[:_NAME_DIGITS]


def write_manifest(directory: Path, fields: dict[str, Any]) -> dict[str, Any]:
    """Digest the model files of ``directory`` and write :data:`MANIFEST` there: ``fields``
    plus ``format`` and ``model_id``. Returns what was written."""
    manifest = {**fields, "format": FORMAT, "model_id": weights_digest(directory)}
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest
