"""The private-data gate: what a request (and later its answer) may do with the cache.

Policies (per namespace, see :class:`~semcache.privacy.PrivacySettings`):

- ``off``: nothing is scanned; the cache behaves as if this module did not exist.
- ``no-store`` (default): a request with private data is answered upstream and its answer is
  never stored, and it is never served from the semantic tier. The exact tier may still be
  read: its key is the whole request in the caller's own tenant, so only an identical request
  could have put anything there.
- ``redact``: a request with private data may be stored, but only in the exact tier under the
  original request's key, with the private spans of the stored question and answer masked; it
  is neither looked up in nor indexed into the semantic tier (two questions that differ only
  in their private values become the same text once masked: serving one's answer for the
  other would be a false hit and a leak).

The answer is checked too (:meth:`PrivacyGate.inspect_answer`): under ``no-store`` an answer
containing private data is not stored; under ``redact`` it is stored masked when the question
was itself redacted (the answer echoes the user's own data), and not stored when the question
was clean (a masked answer to a clean question would be a wrong answer for everyone).

The decision functions are pure; :class:`PrivacyGate` adds detection and the counters, which
hold kinds and decisions only, never matched text.
"""

from __future__ import annotations

import enum
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from semcache.errors import ConfigError
from semcache.privacy.findings import Finding, Kind, PrivateDataDetector
from semcache.privacy.redact import redact
from semcache.privacy.walk import Path, TextField, replace_texts, request_texts, response_texts

_Walk = Callable[[Mapping[str, Any]], list[TextField]]


class PrivacyPolicy(enum.StrEnum):
    """What the cache does with a request that contains private data."""

    OFF = "off"
    NO_STORE = "no-store"
    REDACT = "redact"


_EMPTY: Mapping[Kind, int] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the cache may do with one request.

    ``counts``: findings per kind (empty when clean or not scanned). ``lookup_semantic``: may
    the semantic tier be searched for it. ``store``: may its answer be stored at all (exact
    tier, under the original request's key). ``store_semantic``: may the entry be indexed for
    semantic serving. ``redacted_request``: under ``redact`` with findings, a masked copy of the
    request params to store as the question (None otherwise; then the original is stored).
    The exact tier may always be looked up.
    """

    policy: PrivacyPolicy
    lookup_semantic: bool
    store: bool
    store_semantic: bool
    counts: Mapping[Kind, int] = field(default_factory=lambda: _EMPTY)
    redacted_request: Mapping[str, Any] | None = None

    @property
    def kinds(self) -> frozenset[Kind]:
        return frozenset(self.counts)

    @property
    def private(self) -> bool:
        """True when private data was found."""
        return bool(self.counts)


@dataclass(frozen=True, slots=True)
class AnswerVerdict:
    """Whether an upstream answer may be stored, and in which form.

    ``store``: store it (only ever True when the question's verdict allowed storing).
    ``redacted_response``: a masked copy to store instead of the original (None: store as is).
    ``counts``: findings per kind in the answer.
    """

    store: bool
    counts: Mapping[Kind, int] = field(default_factory=lambda: _EMPTY)
    redacted_response: Mapping[str, Any] | None = None

    @property
    def private(self) -> bool:
        return bool(self.counts)


def decide_question(
    policy: PrivacyPolicy,
    counts: Mapping[Kind, int],
    redacted_request: Mapping[str, Any] | None,
) -> Verdict:
    """The pure decision for a question, given its findings' counts and masked copy."""
    if policy is PrivacyPolicy.OFF or not counts:
        return Verdict(policy, lookup_semantic=True, store=True, store_semantic=True)
    frozen = MappingProxyType(dict(counts))
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
) -> AnswerVerdict:
    """The pure decision for an answer, given the question's verdict and the answer's findings."""
    if not question.store:
        return AnswerVerdict(store=False, counts=MappingProxyType(dict(counts)))
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

    ``findings``: spans found per kind, questions and answers together. ``questions``: requests
    inspected under a policy other than off; ``private_questions``: of those, with findings;
    ``not_stored``: private questions refused storage (no-store); ``redacted``: private
    questions stored masked; ``answers_not_stored``: answers refused storage because they held
    private data; ``answers_redacted``: answers stored masked.
    """

    findings: Mapping[str, int]
    questions: int
    private_questions: int
    not_stored: int
    redacted: int
    answers_not_stored: int
    answers_redacted: int


class PrivacyGate:
    """Scans requests and answers with one detector and decides, counting every decision.

    Thread-safe: detectors are stateless and the counters take a lock.
    """

    def __init__(self, detector: PrivateDataDetector, *, check_answers: bool = True) -> None:
        if not isinstance(detector, PrivateDataDetector):
            raise ConfigError(f"PrivacyGate.detector has no detect(text) method: {detector!r}")
        self._detector = detector
        self._check_answers = check_answers
        self._lock = threading.Lock()
        self._findings: Counter[str] = Counter()
        self._events: Counter[str] = Counter()

    def inspect(self, request_params: Mapping[str, Any], policy: PrivacyPolicy) -> Verdict:
        """The verdict for a chat request (``messages`` etc.) under ``policy``; never mutates it."""
        policy = PrivacyPolicy(policy)
        if policy is PrivacyPolicy.OFF:
            return decide_question(policy, {}, None)
        counts, masked = self._scan(request_params, request_texts, policy is PrivacyPolicy.REDACT)
        verdict = decide_question(policy, counts, masked)
        with self._lock:
            self._events["questions"] += 1
            if verdict.private:
                self._findings.update({kind.value: n for kind, n in counts.items()})
                self._events["private_questions"] += 1
                self._events["redacted" if verdict.store else "not_stored"] += 1
        return verdict

    def inspect_answer(self, response: Mapping[str, Any], question: Verdict) -> AnswerVerdict:
        """Whether the answer (an OpenAI response dict) to ``question`` may be stored, and how."""
        if not question.store or question.policy is PrivacyPolicy.OFF or not self._check_answers:
            return decide_answer(question, {}, None)
        want_masked = question.policy is PrivacyPolicy.REDACT and question.private
        counts, masked = self._scan(response, response_texts, want_masked)
        verdict = decide_answer(question, counts, masked)
        if verdict.private:
            with self._lock:
                self._findings.update({kind.value: n for kind, n in counts.items()})
                self._events["answers_redacted" if verdict.store else "answers_not_stored"] += 1
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
        )

    def _scan(
        self, obj: Mapping[str, Any], walk: _Walk, want_masked: bool
    ) -> tuple[Counter[Kind], dict[str, Any] | None]:
        counts: Counter[Kind] = Counter()
        replacements: dict[Path, str] = {}
        for text_field in walk(obj):
            findings: Sequence[Finding] = self._detector.detect(text_field.text)
            if not findings:
                continue
            counts.update(finding.kind for finding in findings)
            if want_masked:
                replacements[text_field.path] = redact(text_field.text, findings)
        masked = replace_texts(obj, replacements) if want_masked and replacements else None
        return counts, masked
