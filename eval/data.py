"""Labeled text pairs: the input of every evaluation.

Label 1: one answer serves both texts; 0: a hit between them is a false hit. Sources: JSON
Lines, CSV, TSV, a shipped set by name (:data:`semcache.datasets.SHIPPED_SETS`) or
``hf:<name>[:split]``; an optional ``kind`` column (every row, when the first has it). The
first bad row stops loading with an error naming file, line and field, since a skipped row
changes every rate reported.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from semcache.datasets import SHIPPED_SETS, shipped_set_path
from semcache.errors import MissingDependency, SemcacheError

_LABEL_WORDS = {"0": 0, "1": 1, "false": 0, "true": 1}


class PairDataError(SemcacheError, ValueError):
    """A pair file or row is unusable; ``source``, ``line`` and ``field`` say where."""

    def __init__(self, source: str, line: int | None, field: str | None, problem: str) -> None:
        self.source = source
        self.line = line
        self.field = field
        self.problem = problem
        where = source if line is None else f"{source}, line {line}"
        what = "" if field is None else f" field {field!r}"
        super().__init__(f"{where}:{what} {problem}")


class DatasetsNotInstalled(MissingDependency):
    """``hf:`` sources need the ``datasets`` package, which no semcache extra installs."""

    def __init__(self) -> None:
        self.package = "datasets"
        self.extra = ""
        ImportError.__init__(
            self,
            "loading an 'hf:' source needs the 'datasets' package; install it yourself "
            "(pip install datasets): semcache never installs packages at run time",
        )


@dataclass(frozen=True)
class PairSet:
    """Labeled pairs held column-wise: ``text_a[i]``, ``text_b[i]``, ``labels[i]`` (int8, 0/1)
    and, when the source tags them, ``kinds[i]`` (the pair's shape, e.g. ``antonym``)."""

    name: str
    text_a: list[str]
    text_b: list[str]
    labels: np.ndarray
    kinds: list[str] | None = None

    def __post_init__(self) -> None:
        lengths = [len(self.text_a), len(self.text_b), len(self.labels)]
        if self.kinds is not None:
            lengths.append(len(self.kinds))
        if len(set(lengths)) != 1:
            raise ValueError(
                f"pair set {self.name!r}: column lengths differ ({', '.join(map(str, lengths))})"
            )

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def positives(self) -> int:
        return int((self.labels == 1).sum())

    @property
    def negatives(self) -> int:
        return len(self) - self.positives

    def take(self, indices: Sequence[int] | np.ndarray) -> PairSet:
        """The pairs at ``indices``, in that order, under the same name."""
        rows = np.asarray(indices, dtype=np.int64)
        return PairSet(
            name=self.name,
            text_a=[self.text_a[i] for i in rows],
            text_b=[self.text_b[i] for i in rows],
            labels=self.labels[rows],
            kinds=None if self.kinds is None else [self.kinds[i] for i in rows],
        )

    def sample(self, limit: int, seed: int = 0) -> PairSet:
        """A uniform random ``limit`` pairs (file order kept), the same for the same seed."""
        if limit < 0:
            raise ValueError(f"limit must be >= 0, got {limit}")
        if limit >= len(self):
            return self
        chosen = np.sort(np.random.default_rng(seed).choice(len(self), limit, replace=False))
        return self.take(chosen)


def join(first: PairSet, second: PairSet, name: str | None = None) -> PairSet:
    """``first``'s pairs then ``second``'s, named ``name`` (default: ``first``'s name); kinds
    are kept only when both sets have them."""
    both = first.kinds is not None and second.kinds is not None
    return PairSet(
        name=first.name if name is None else name,
        text_a=[*first.text_a, *second.text_a],
        text_b=[*first.text_b, *second.text_b],
        labels=np.concatenate([first.labels, second.labels]).astype(np.int8),
        kinds=[*(first.kinds or []), *(second.kinds or [])] if both else None,
    )


@dataclass(frozen=True)
class Columns:
    """Which fields hold the two texts and the label."""

    text_a: str = "text_a"
    text_b: str = "text_b"
    label: str = "label"
    kind: str = "kind"


def _text(source: str, line: int, row: Mapping[str, Any], field: str) -> str:
    if field not in row or row[field] is None:
        raise PairDataError(source, line, field, "is missing")
    value = row[field]
    if not isinstance(value, str):
        raise PairDataError(source, line, field, f"must be text, got {type(value).__name__}")
    if not value.strip():
        raise PairDataError(source, line, field, "is empty")
    return value


def _kind(source: str, line: int, row: Mapping[str, Any], field: str) -> str | None:
    """The pair's kind, or None when the row has no such field (or, in CSV, an empty cell)."""
    value = row.get(field)
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not value.strip():
        raise PairDataError(source, line, field, f"must be non-empty text, got {value!r}")
    return value


def _label(source: str, line: int, row: Mapping[str, Any], field: str) -> int:
    if field not in row or row[field] is None:
        raise PairDataError(source, line, field, "is missing")
    value = row[field]
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float) and value in (0, 1):
        return int(value)
    if isinstance(value, str) and value.strip().lower() in _LABEL_WORDS:
        return _LABEL_WORDS[value.strip().lower()]
    raise PairDataError(source, line, field, f"must be 0 or 1, got {value!r}")


def _jsonl_rows(path: Path) -> Iterator[tuple[int, Mapping[str, Any]]]:
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                row = json.loads(text)
            except json.JSONDecodeError as exc:
                raise PairDataError(str(path), number, None, f"invalid JSON: {exc.msg}") from exc
            if not isinstance(row, dict):
                raise PairDataError(str(path), number, None, "expected a JSON object")
            yield number, row


def _delimited_rows(path: Path, delimiter: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    with path.open(encoding="utf-8", newline="") as handle:
        # TSV corpora quote nothing; a stray '"' must stay text, not open a quoted field
        quoting: Literal[0, 1, 2, 3] = csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL
        reader = csv.DictReader(handle, delimiter=delimiter, quoting=quoting)
        for row in reader:
            if None in row:
                raise PairDataError(str(path), reader.line_num, None, "more fields than header")
            yield reader.line_num, row


def _file_rows(path: Path) -> Iterator[tuple[int, Mapping[str, Any]]]:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        return _jsonl_rows(path)
    if suffix == ".csv":
        return _delimited_rows(path, ",")
    if suffix in (".tsv", ".tab"):
        return _delimited_rows(path, "\t")
    raise PairDataError(str(path), None, None, "unknown format: expected .jsonl, .csv or .tsv")


def _hf_rows(spec: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    name, _, split = spec.partition(":")
    try:
        import datasets
    except ImportError as exc:
        raise DatasetsNotInstalled() from exc
    try:
        table = datasets.load_dataset(name, split=split or "test")
    except (OSError, ValueError) as exc:  # not found, offline, bad split or config
        raise PairDataError(f"hf:{spec}", None, None, f"cannot load: {exc}") from exc
    yield from enumerate(table, start=1)


def _rows(source: str | Path) -> tuple[str, Iterator[tuple[int, Mapping[str, Any]]]]:
    text = str(source)
    if text.startswith("hf:"):
        return text[3:].partition(":")[0], _hf_rows(text[3:])
    path = Path(source)
    if text in SHIPPED_SETS and not path.exists():
        path = shipped_set_path(text)
    if not path.is_file():
        shipped = "" if path.suffix else f" (shipped sets: {', '.join(SHIPPED_SETS)})"
        raise PairDataError(text, None, None, f"no such file{shipped}")
    return path.stem, _file_rows(path)


def load_pairs(
    source: str | Path,
    *,
    columns: Columns | None = None,
    limit: int | None = None,
    seed: int = 0,
    name: str | None = None,
) -> PairSet:
    """Load and check every row of ``source``; then keep ``limit`` pairs sampled with ``seed``.

    ``name`` defaults to the file name without suffix (the dataset or shipped set's name). A file
    path wins over a shipped set of the same name. Labels: 0/1, booleans, "0", "1", "true",
    "false".
    """
    columns = Columns() if columns is None else columns
    default_name, rows = _rows(source)
    text_a: list[str] = []
    text_b: list[str] = []
    labels: list[int] = []
    kinds: list[str] = []
    tagged: bool | None = None  # whether rows have a kind: the first row decides
    where = str(source)
    for line, row in rows:
        text_a.append(_text(where, line, row, columns.text_a))
        text_b.append(_text(where, line, row, columns.text_b))
        labels.append(_label(where, line, row, columns.label))
        kind = _kind(where, line, row, columns.kind)
        tagged = kind is not None if tagged is None else tagged
        if tagged and kind is None:
            raise PairDataError(where, line, columns.kind, "is missing (earlier rows have it)")
        if tagged and kind is not None:
            kinds.append(kind)
    if not labels:
        raise PairDataError(where, None, None, "contains no pairs")
    pairs = PairSet(
        name=default_name if name is None else name,
        text_a=text_a,
        text_b=text_b,
        labels=np.asarray(labels, dtype=np.int8),
        kinds=kinds if tagged else None,
    )
    return pairs if limit is None else pairs.sample(limit, seed)
