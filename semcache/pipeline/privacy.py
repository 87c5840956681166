"""The private-data gate as two stages: one before any lookup, one on the fresh answer.

Before lookups, ``PrivacyStage`` scans the request under its namespace's policy and turns the
semantic tier off for a question with private data (no-store: also storing; redact: stored
masked, exact tier only). Right before the upstream call, ``PrivacyAnswerStage`` scans the
answer: one holding private data is not stored, or stored masked under ``redact``. Only kinds
and decisions are counted (``PrivacyGate.stats``), never the matched text.
"""

from __future__ import annotations

from dataclasses import replace

from litellm import ModelResponse

from semcache.core.answer import Answer, decode, encode
from semcache.core.fingerprint import last_user_prompt
from semcache.pipeline.base import Found, Next, Request
from semcache.privacy.gate import PrivacyGate
from semcache.privacy.settings import PrivacySettings
from semcache.stats import MissReason


class PrivacyStage:
    """Scan the question; narrow what the tiers may do with a private one."""

    def __init__(self, gate: PrivacyGate, settings: PrivacySettings) -> None:
        self._gate = gate
        self._settings = settings

    async def __call__(self, request: Request, call_next: Next) -> Found:
        policy = self._settings.policy_for(request.control.namespace, request.control.privacy)
        verdict = self._gate.inspect(request.params, policy)
        decision = request.decision
        if verdict.private:
            decision = replace(
                decision,
                semantic=decision.semantic and verdict.store_semantic,
                store=decision.store and verdict.store,
            )
        reason = MissReason.PRIVATE if verdict.private and not decision.semantic else None
        request = replace(request, decision=decision, privacy=verdict, miss_reason=reason)
        found = await call_next(request)
        if not verdict.private:
            return found
        return replace(found, private_data=tuple(sorted(kind.value for kind in verdict.kinds)))


class PrivacyAnswerStage:
    """Scan the fresh answer before anything stores it; mask what ``redact`` keeps."""

    def __init__(self, gate: PrivacyGate) -> None:
        self._gate = gate

    async def __call__(self, request: Request, call_next: Next) -> Found:
        found = await call_next(request)
        verdict = request.privacy
        if verdict is None or found.response is None or not request.decision.store:
            return found
        checked = self._gate.inspect_answer(found.response.model_dump(), verdict)
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
