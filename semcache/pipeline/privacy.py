"""The private-data gate, twice: on the question before any lookup, on the fresh answer.

Before lookups, ``QuestionGate`` scans the request under its namespace's policy and turns the
semantic tier off for a question with private data (no-store: also storing; redact: stored
masked, exact tier only). Right before the upstream call, ``PrivacyAnswerStage`` scans the
answer: one holding private data is not stored, or stored masked under ``redact``. Only kinds
and decisions are counted (``PrivacyGate.stats``), never the matched text.

Both scans run in :class:`ScanRunner`'s worker threads, never on the event loop: a large body
costs the loop nothing, and a scan past its deadline makes the request private unscanned
(answered, not stored or shared) instead of delaying it.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TypeVar

from litellm import ModelResponse

from semcache.core.answer import Answer, decode, encode
from semcache.core.fingerprint import last_user_prompt
from semcache.pipeline.base import Found, Next, Request
from semcache.privacy.deadline import scan_deadline
from semcache.privacy.gate import PrivacyGate, PrivacyPolicy, Unscanned, decide_answer
from semcache.privacy.settings import PrivacySettings
from semcache.stats import MissReason

_T = TypeVar("_T")


class ScanRunner:
    """Runs CPU-bound scans in worker threads, each within ``deadline_s`` seconds.

    ``run`` returns None when the deadline passes first; a scan not yet started is dropped, one
    already running stops at its next deadline check (see :mod:`semcache.privacy.deadline`),
    as it does when the awaiting request is cancelled (a server shutting down). The pool
    has ``workers`` threads, started on first use, so a small question's scan is not queued
    behind a few large ones: the GIL shares the CPU among them.
    """

    def __init__(self, deadline_s: float, *, workers: int = 8) -> None:
        self._deadline_s = deadline_s
        self._workers = workers
        self._pool: ThreadPoolExecutor | None = None

    def preload(self, load: Callable[[], object]) -> None:
        """Run ``load`` (the detectors' imports) in the pool now, off the caller's thread, so
        the first scans do not each wait on it. A failure is left for the first scan to meet
        (a missing extra is reported there, as without a preload)."""
        self._start().submit(load)

    def _start(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="semcache-scan")
        return self._pool

    async def run(self, scan: Callable[..., _T], *args: object) -> _T | None:
        pool = self._start()
        at = time.monotonic() + self._deadline_s
        stop = threading.Event()

        def call() -> _T:
            with scan_deadline(at, stop):
                return scan(*args)

        future = asyncio.get_running_loop().run_in_executor(pool, call)
        try:
            return await asyncio.wait_for(future, self._deadline_s)
        except TimeoutError:
            return None
        finally:  # nobody waits for it any more (deadline, cancelled request, shutdown)
            stop.set()


class QuestionGate:
    """Scan the question; narrow what the tiers may do with a private one."""

    def __init__(self, gate: PrivacyGate, settings: PrivacySettings, scans: ScanRunner) -> None:
        self._gate = gate
        self._settings = settings
        self._scans = scans

    async def __call__(self, request: Request) -> Request:
        """``request`` with the gate's verdict, its decision narrowed when it is private."""
        policy = self._settings.policy_for(request.control.namespace, request.control.privacy)
        if policy is PrivacyPolicy.OFF:
            verdict = self._gate.inspect(request.params, policy)
        else:
            scanned = await self._scans.run(self._gate.assess, request.params, policy)
            if scanned is None:
                scanned = self._gate.unscanned(policy, Unscanned.TIMED_OUT)
            verdict = self._gate.record(scanned)
        decision = request.decision
        if verdict.private:
            decision = replace(
                decision,
                semantic=decision.semantic and verdict.store_semantic,
                store=decision.store and verdict.store,
            )
        reason = MissReason.PRIVATE if verdict.private and not decision.semantic else None
        return replace(request, decision=decision, privacy=verdict, miss_reason=reason)


class PrivacyAnswerStage:
    """Scan the fresh answer before anything stores it; mask what ``redact`` keeps."""

    def __init__(self, gate: PrivacyGate, scans: ScanRunner) -> None:
        self._gate = gate
        self._scans = scans

    async def __call__(self, request: Request, call_next: Next) -> Found:
        found = await call_next(request)
        verdict = request.privacy
        if verdict is None or found.response is None or not request.decision.store:
            return found
        if self._gate.scans_answer(verdict):
            response = found.response.model_dump()
            scanned = await self._scans.run(self._gate.assess_answer, response, verdict)
            if scanned is None:
                scanned = self._gate.unscanned_answer(verdict, Unscanned.TIMED_OUT)
            checked = self._gate.record_answer(scanned)
        else:
            checked = decide_answer(verdict, {}, None)
        if not checked.store:
            return replace(found, storable=False)
        masked_request = verdict.redacted_request
        if masked_request is None and checked.redacted_response is None:
            return found
        entry = found.answer.entry
        response, cost = decode(entry.response)
        if checked.redacted_response is not None:
            response = dict(checked.redacted_response)
        question = entry.question
        if masked_request is not None and question is not None:
            messages = masked_request.get("messages") or []
            question = last_user_prompt(messages) if messages else None
        masked = replace(entry, response=encode(ModelResponse(**response), cost), question=question)
        return replace(found, stored=Answer.of(masked))
