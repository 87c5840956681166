"""The private-data gate: what a request (and later its answer) may do with the cache.

Policies (per namespace, :class:`~semcache.privacy.PrivacySettings`): ``off`` scans nothing;
``no-store`` (default) answers a request with private data upstream, never stores the answer
and never serves it from the semantic tier (the exact tier, keyed by the whole request in the
caller's tenant, may still be read); ``redact`` stores it masked in the exact tier only (two
questions differing only in private values mask to one text: a semantic hit would leak).
:meth:`PrivacyGate.inspect_answer` applies the same to the answer. A text the gate cannot
afford to scan is private whatever the policy (:class:`Unscanned`). Counters hold kinds and
decisions, never matched text.
"""

from __future__ import annotations

import contextlib
import enum
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from semcache.errors import ConfigError, ScanLimitExceeded, ScanTimedOut
from semcache.privacy.deadline import check_deadline
from semcache.privacy.findings import Finding, Kind, PrivateDataDetector
from semcache.privacy.redact import redact
from semcache.privacy.walk import Path, TextField, replace_texts, request_texts, response_texts

_Walk = Callable[[Mapping[str, Any]], list[TextField]]


class PrivacyPolicy(enum.StrEnum):
    """What the cache does with a request that contains private data."""

    OFF = "off"
    NO_STORE = "no-store"
    REDACT = "redact"


class Unscanned(enum.StrEnum):
    """Why a text was treated as private without a complete scan (shown in ``private_data``)."""

    OVERSIZED = "oversized"
    """More text than ``max_scan_bytes``, or more number-like candidates than a detector's
    work budget allows."""
    TIMED_OUT = "scan_timeout"
    """The scan did not finish within its deadline."""


_EMPTY: Mapping[Kind, int] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the cache may do with one request: search the semantic tier (``lookup_semantic``),
    store the answer (``store``, exact tier under the original key), index it semantically
    (``store_semantic``); ``redacted_request`` is the masked question to store under ``redact``;
    ``unscanned`` makes it private. The exact tier may always be looked up.
    """

    policy: PrivacyPolicy
    lookup_semantic: bool
    store: bool
    store_semantic: bool
    counts: Mapping[Kind, int] = field(default_factory=lambda: _EMPTY)
    redacted_request: Mapping[str, Any] | None = None
    unscanned: Unscanned | None = None

    @property
    def kinds(self) -> frozenset[Kind]:
        return frozenset(self.counts)

    @property
    def private(self) -> bool:
        """True when private data was found, or may be there unread."""
        return bool(self.counts) or self.unscanned is not None

    @property
    def labels(self) -> tuple[str, ...]:
        """What ``CacheInfo.private_data`` shows: the kinds found, and why a scan stopped."""
        kinds = sorted(kind.value for kind in self.counts)
        return (*kinds, self.unscanned.value) if self.unscanned is not None else tuple(kinds)


@dataclass(frozen=True, slots=True)
class AnswerVerdict:
    """Whether an upstream answer may be stored (only if the question's verdict allowed it), and
    in which form: ``redacted_response`` to store instead (None: as is); an ``unscanned`` answer
    is never stored.
    """

    store: bool
    counts: Mapping[Kind, int] = field(default_factory=lambda: _EMPTY)
    redacted_response: Mapping[str, Any] | None = None
    unscanned: Unscanned | None = None

    @property
    def private(self) -> bool:
        return bool(self.counts) or self.unscanned is not None


def decide_question(
    policy: PrivacyPolicy,
    counts: Mapping[Kind, int],
    redacted_request: Mapping[str, Any] | None,
    unscanned: Unscanned | None = None,
) -> Verdict:
    """The pure decision for a question, given its findings' counts and masked copy.

    An ``unscanned`` question is neither stored nor looked up semantically under any policy
    but off (there is no masked copy of what was not read).
    """
    if policy is PrivacyPolicy.OFF or (not counts and unscanned is None):
        return Verdict(policy, lookup_semantic=True, store=True, store_semantic=True)
    frozen = MappingProxyType(dict(counts))
    if unscanned is not None:
        return Verdict(
            policy,
            lookup_semantic=False,
            store=False,
            store_semantic=False,
            counts=frozen,
            unscanned=unscanned,
        )
    if policy is PrivacyPolicy.NO_STORE:
        return Verdict(
            policy, lookup_semantic=False, store=False, store_semantic=False, counts=frozen
        )
    if redacted_request is None:
        raise ConfigError("decide_question: policy redact with findings needs the masked copy")
    return Verdict(
        policy,
        lookup_semantic=False,
        store=True,
        store_semantic=False,
        counts=frozen,
        redacted_request=redacted_request,
    )


def decide_answer(
    question: Verdict,
    counts: Mapping[Kind, int],
    redacted_response: Mapping[str, Any] | None,
    unscanned: Unscanned | None = None,
) -> AnswerVerdict:
    """The pure decision for an answer, given the question's verdict and the answer's findings.

    An ``unscanned`` answer is never stored.
    """
    if not question.store or (unscanned is not None and question.policy is not PrivacyPolicy.OFF):
        frozen = MappingProxyType(dict(counts))
        return AnswerVerdict(store=False, counts=frozen, unscanned=unscanned)
    if question.policy is PrivacyPolicy.OFF or not counts:
        return AnswerVerdict(store=True)
    frozen = MappingProxyType(dict(counts))
    if question.policy is PrivacyPolicy.REDACT and question.private:
        if redacted_response is None:
            raise ConfigError("decide_answer: redacting an answer needs the masked copy")
        return AnswerVerdict(store=True, counts=frozen, redacted_response=redacted_response)
    return AnswerVerdict(store=False, counts=frozen)


@dataclass(frozen=True, slots=True)
class PrivacyStats:
    """A snapshot of the gate's counters: kinds and decisions only, never matched text.

    ``findings``: spans per kind; ``questions``: requests inspected under a policy; the decision
    counters name themselves; ``oversized`` and ``scan_timeouts`` (treated as private unscanned,
    :class:`Unscanned`) are also counted in the decisions.
    """

    findings: Mapping[str, int]
    questions: int
    private_questions: int
    not_stored: int
    redacted: int
    answers_not_stored: int
    answers_redacted: int
    oversized: int = 0
    scan_timeouts: int = 0


class PrivacyGate:
    """Scans requests and answers with one detector and decides, counting every decision.

    ``max_scan_bytes``: the most UTF-8 bytes scanned per request or answer (None: no cap;
    beyond: :attr:`Unscanned.OVERSIZED`). Thread-safe: :meth:`assess` may run in a worker thread
    while :meth:`record` counts on the caller's. A request or answer of more than
    ``long_text_chars`` characters is scanned while no other long one is: a scan holds the GIL,
    and several long ones at once left the event loop (and a stop request) waiting on each of
    them in turn; one at a time costs no throughput, and short texts are never queued.
    """

    def __init__(
        self,
        detector: PrivateDataDetector,
        *,
        check_answers: bool = True,
        max_scan_bytes: int | None = None,
        long_text_chars: int = 65_536,
    ) -> None:
        if not isinstance(detector, PrivateDataDetector):
            raise ConfigError(f"PrivacyGate.detector has no detect(text) method: {detector!r}")
        if max_scan_bytes is not None and max_scan_bytes < 0:
            raise ConfigError(f"PrivacyGate.max_scan_bytes must be >= 0, got {max_scan_bytes}")
        if long_text_chars < 0:
            raise ConfigError(f"PrivacyGate.long_text_chars must be >= 0, got {long_text_chars}")
        self._detector = detector
        self._check_answers = check_answers
        self._max_scan_bytes = max_scan_bytes
        self._long_text_chars = long_text_chars
        self._long_scan = threading.Lock()
        self._lock = threading.Lock()
        self._findings: Counter[str] = Counter()
        self._events: Counter[str] = Counter()

    def load(self) -> None:
        """Import the detector's libraries now (when it has a ``load``), not in a scan."""
        load = getattr(self._detector, "load", None)
        if callable(load):
            load()

    def inspect(self, request_params: Mapping[str, Any], policy: PrivacyPolicy) -> Verdict:
        """The verdict for a chat request (``messages`` etc.) under ``policy``; never mutates it."""
        return self.record(self.assess(request_params, policy))

    def assess(self, request_params: Mapping[str, Any], policy: PrivacyPolicy) -> Verdict:
        """:meth:`inspect` without counting: the CPU-bound part, safe in a worker thread."""
        policy = PrivacyPolicy(policy)
        if policy is PrivacyPolicy.OFF:
            return decide_question(policy, {}, None)
        want_masked = policy is PrivacyPolicy.REDACT
        try:
            counts, masked = self._scan(request_params, request_texts, want_masked)
        except _Unscannable as exc:
            return decide_question(policy, {}, None, exc.reason)
        return decide_question(policy, counts, masked)

    def unscanned(self, policy: PrivacyPolicy, reason: Unscanned) -> Verdict:
        """The verdict for a request whose scan did not finish (not counted: see :meth:`record`)."""
        return decide_question(PrivacyPolicy(policy), {}, None, reason)

    def record(self, verdict: Verdict) -> Verdict:
        """Count a question's verdict (once per request) and return it."""
        if verdict.policy is PrivacyPolicy.OFF:
            return verdict
        with self._lock:
            self._events["questions"] += 1
            if verdict.private:
                self._findings.update({kind.value: n for kind, n in verdict.counts.items()})
                self._events["private_questions"] += 1
                self._events["redacted" if verdict.store else "not_stored"] += 1
            if verdict.unscanned is not None:
                self._events[_UNSCANNED_EVENT[verdict.unscanned]] += 1
        return verdict

    def inspect_answer(self, response: Mapping[str, Any], question: Verdict) -> AnswerVerdict:
        """Whether the answer (an OpenAI response dict) to ``question`` may be stored, and how."""
        return self.record_answer(self.assess_answer(response, question))

    def assess_answer(self, response: Mapping[str, Any], question: Verdict) -> AnswerVerdict:
        """:meth:`inspect_answer` without counting: safe in a worker thread."""
        if not self.scans_answer(question):
            return decide_answer(question, {}, None)
        want_masked = question.policy is PrivacyPolicy.REDACT and question.private
        try:
            counts, masked = self._scan(response, response_texts, want_masked)
        except _Unscannable as exc:
            return decide_answer(question, {}, None, exc.reason)
        return decide_answer(question, counts, masked)

    def scans_answer(self, question: Verdict) -> bool:
        """Whether :meth:`assess_answer` would scan an answer to ``question`` at all."""
        return question.store and question.policy is not PrivacyPolicy.OFF and self._check_answers

    def unscanned_answer(self, question: Verdict, reason: Unscanned) -> AnswerVerdict:
        """The verdict for an answer whose scan did not finish (not counted)."""
        return decide_answer(question, {}, None, reason)

    def record_answer(self, verdict: AnswerVerdict) -> AnswerVerdict:
        """Count an answer's verdict and return it."""
        if verdict.private:
            with self._lock:
                self._findings.update({kind.value: n for kind, n in verdict.counts.items()})
                self._events["answers_redacted" if verdict.store else "answers_not_stored"] += 1
                if verdict.unscanned is not None:
                    self._events[_UNSCANNED_EVENT[verdict.unscanned]] += 1
        return verdict

    def stats(self) -> PrivacyStats:
        with self._lock:
            events = dict(self._events)
            findings = MappingProxyType(dict(self._findings))
        return PrivacyStats(
            findings=findings,
            questions=events.get("questions", 0),
            private_questions=events.get("private_questions", 0),
            not_stored=events.get("not_stored", 0),
            redacted=events.get("redacted", 0),
            answers_not_stored=events.get("answers_not_stored", 0),
            answers_redacted=events.get("answers_redacted", 0),
            oversized=events.get("oversized", 0),
            scan_timeouts=events.get("scan_timeouts", 0),
        )

    def _scan(
        self, obj: Mapping[str, Any], walk: _Walk, want_masked: bool
    ) -> tuple[Counter[Kind], dict[str, Any] | None]:
        fields = walk(obj)
        if self._max_scan_bytes is not None:
            size = 0
            for text_field in fields:
                size += len(text_field.text.encode("utf-8", "surrogatepass"))
                if size > self._max_scan_bytes:
                    raise _Unscannable(Unscanned.OVERSIZED)
        long = sum(len(text_field.text) for text_field in fields) > self._long_text_chars
        try:
            with self._alone() if long else contextlib.nullcontext():
                found = [(f, self._detect(f.text)) for f in fields]
        except ScanTimedOut:
            raise _Unscannable(Unscanned.TIMED_OUT) from None
        except ScanLimitExceeded:
            raise _Unscannable(Unscanned.OVERSIZED) from None
        counts: Counter[Kind] = Counter()
        replacements: dict[Path, str] = {}
        for text_field, findings in found:
            if not findings:
                continue
            counts.update(finding.kind for finding in findings)
            if want_masked:
                replacements[text_field.path] = redact(text_field.text, findings)
        masked = replace_texts(obj, replacements) if want_masked and replacements else None
        return counts, masked

    def _detect(self, text: str) -> Sequence[Finding]:
        check_deadline()
        return self._detector.detect(text)

    @contextlib.contextmanager
    def _alone(self) -> Iterator[None]:
        """Hold the long-scan lock, waiting for it no longer than the scan's deadline."""
        while not self._long_scan.acquire(timeout=0.05):
            check_deadline()
        try:
            yield
        finally:
            self._long_scan.release()


_UNSCANNED_EVENT = {Unscanned.OVERSIZED: "oversized", Unscanned.TIMED_OUT: "scan_timeouts"}


class _Unscannable(Exception):
    """Internal: the scan stopped for ``reason``; turned into a verdict by the caller."""

    def __init__(self, reason: Unscanned) -> None:
        super().__init__(reason.value)
        self.reason = reason
