"""The gate's verdicts for every policy, the answer check, the counters, and the settings."""

from __future__ import annotations

import copy
import sys

import pytest

import semcache.privacy as privacy
from semcache.errors import ConfigError, MissingDependency, SettingsError
from semcache.privacy import (
    Kind,
    PrivacyGate,
    PrivacyPolicy,
    PrivacySettings,
    Verdict,
    build_gate,
    decide_answer,
    decide_question,
    default_detector,
)

OFF, NO_STORE, REDACT = PrivacyPolicy.OFF, PrivacyPolicy.NO_STORE, PrivacyPolicy.REDACT


def chat(text: str) -> dict:
    return {"model": "m", "messages": [{"role": "user", "content": text}]}


def answer(text: str) -> dict:
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}


PRIVATE = chat("My card is 4111 1111 1111 1111, mail a.b@corp.io")
CLEAN = chat("What is the capital of France?")


@pytest.fixture
def gate() -> PrivacyGate:
    return PrivacyGate(default_detector())


def test_clean_request_may_do_everything(gate):
    for policy in (OFF, NO_STORE, REDACT):
        verdict = gate.inspect(CLEAN, policy)
        assert (verdict.lookup_semantic, verdict.store, verdict.store_semantic) == (True,) * 3
        assert not verdict.private and verdict.redacted_request is None


def test_off_does_not_even_scan(gate):
    verdict = gate.inspect(PRIVATE, OFF)
    assert verdict.store and verdict.lookup_semantic and not verdict.private
    assert gate.stats().questions == 0


def test_no_store(gate):
    verdict = gate.inspect(PRIVATE, NO_STORE)
    assert verdict.kinds == {Kind.CARD, Kind.EMAIL}
    assert dict(verdict.counts) == {Kind.CARD: 1, Kind.EMAIL: 1}
    assert not verdict.lookup_semantic
    assert not verdict.store
    assert not verdict.store_semantic
    assert verdict.redacted_request is None


def test_redact_masks_a_copy_and_keeps_it_out_of_the_semantic_tier(gate):
    before = copy.deepcopy(PRIVATE)
    verdict = gate.inspect(PRIVATE, REDACT)
    assert before == PRIVATE
    assert verdict.store and not verdict.store_semantic and not verdict.lookup_semantic
    assert verdict.redacted_request["messages"][0]["content"] == "My card is [CARD], mail [EMAIL]"
    assert verdict.redacted_request["model"] == "m"


def test_policy_accepts_its_string_value(gate):
    assert not gate.inspect(PRIVATE, "no-store").store
    with pytest.raises(ValueError):
        gate.inspect(PRIVATE, "sometimes")


def test_answer_with_private_data_is_not_stored_under_no_store(gate):
    question = gate.inspect(CLEAN, NO_STORE)
    verdict = gate.inspect_answer(answer("Email the mayor at mayor@paris-city.fr"), question)
    assert not verdict.store and verdict.counts == {Kind.EMAIL: 1}
    assert gate.inspect_answer(answer("Paris."), question).store


def test_answer_to_a_redacted_question_is_stored_masked(gate):
    question = gate.inspect(PRIVATE, REDACT)
    response = answer("Noted a.b@corp.io, your card ends in 1111.")
    before = copy.deepcopy(response)
    verdict = gate.inspect_answer(response, question)
    assert response == before
    assert verdict.store
    masked = verdict.redacted_response["choices"][0]["message"]["content"]
    assert masked == "Noted [EMAIL], your card ends in 1111."


def test_private_answer_to_a_clean_question_is_not_stored_under_redact(gate):
    question = gate.inspect(CLEAN, REDACT)
    verdict = gate.inspect_answer(answer("Write to mayor@paris-city.fr"), question)
    assert not verdict.store and verdict.redacted_response is None


def test_answer_to_an_unstorable_question_is_never_stored(gate):
    question = gate.inspect(PRIVATE, NO_STORE)
    assert not gate.inspect_answer(answer("Paris."), question).store


def test_answer_check_can_be_turned_off():
    gate = PrivacyGate(default_detector(), check_answers=False)
    question = gate.inspect(CLEAN, NO_STORE)
    assert gate.inspect_answer(answer("mayor@paris-city.fr"), question).store


def test_counters_hold_kinds_and_decisions_never_text(gate):
    gate.inspect(PRIVATE, NO_STORE)
    gate.inspect(PRIVATE, REDACT)
    gate.inspect(CLEAN, NO_STORE)
    clean_q = gate.inspect(CLEAN, NO_STORE)
    gate.inspect_answer(answer("call +1 415-555-2671"), clean_q)
    redact_q = gate.inspect(PRIVATE, REDACT)
    gate.inspect_answer(answer("a.b@corp.io"), redact_q)
    stats = gate.stats()
    assert dict(stats.findings) == {"card": 3, "email": 4, "phone": 1}
    assert (stats.questions, stats.private_questions, stats.not_stored, stats.redacted) == (
        5,
        3,
        1,
        2,
    )
    assert (stats.answers_not_stored, stats.answers_redacted) == (1, 1)
    assert "4111" not in repr(stats) and "corp.io" not in repr(stats)


def test_pure_decisions():
    assert decide_question(NO_STORE, {}, None).store
    assert not decide_question(NO_STORE, {Kind.IP: 1}, None).store
    with pytest.raises(ConfigError):
        decide_question(REDACT, {Kind.IP: 1}, None)
    redacted = decide_question(REDACT, {Kind.IP: 1}, {"messages": []})
    assert redacted.store and not redacted.store_semantic
    assert decide_answer(redacted, {}, None).store
    assert not decide_answer(decide_question(NO_STORE, {}, None), {Kind.IP: 1}, None).store
    assert decide_answer(Verdict(OFF, True, True, True), {Kind.IP: 1}, None).store


def test_gate_refuses_a_non_detector():
    with pytest.raises(ConfigError, match="detect"):
        PrivacyGate(object())  # type: ignore[arg-type]


def test_settings_defaults_and_build():
    settings = PrivacySettings()
    assert settings.policy is NO_STORE
    assert settings.kinds == frozenset(Kind)
    gate = build_gate(settings)
    assert not gate.inspect(PRIVATE, settings.policy_for("default")).store


def test_settings_patterns_and_kinds_reach_the_gate():
    settings = PrivacySettings(kinds={"custom"}, patterns={"employee_id": r"EMP-\d{6}"})
    gate = build_gate(settings)
    assert (
        gate.inspect(chat("I am EMP-123456, a.b@corp.io"), REDACT).redacted_request["messages"][0][
            "content"
        ]
        == "I am [EMPLOYEE_ID], a.b@corp.io"
    )


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"patterns": {"x": "("}}, "patterns"),
        ({"policy": "maybe"}, "policy"),
        ({"kinds": {"dna"}}, "kinds"),
        ({"phone_regions": ()}, "phone_regions"),
        ({"unknown": 1}, "unknown"),
    ],
)
def test_settings_errors_name_the_field(kwargs, field):
    with pytest.raises(SettingsError, match=field):
        PrivacySettings(**kwargs)


def test_policy_for_namespace_and_request():
    settings = PrivacySettings(policy=REDACT, namespaces={"public": OFF, "hr": NO_STORE})
    assert settings.policy_for("other") is REDACT
    assert settings.policy_for("public") is OFF
    assert settings.policy_for("hr") is NO_STORE
    assert settings.policy_for("public", "redact") is REDACT  # tightening is always allowed
    assert settings.policy_for("hr", "off") is NO_STORE  # loosening is not, by default
    loose = PrivacySettings(policy=NO_STORE, allow_request_loosen=True)
    assert loose.policy_for("x", "off") is OFF
    with pytest.raises(ConfigError, match="policy"):
        settings.policy_for("x", "sometimes")


def test_missing_package_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "phonenumbers", None)
    with pytest.raises(MissingDependency, match=r"semcache-llm\[privacy\]"):
        privacy.PhoneDetector().detect("call me at +1 415-555-2671")


def test_public_api_is_pinned():
    assert sorted(privacy.__all__) == [
        "ALL_KINDS",
        "AnswerVerdict",
        "CardDetector",
        "CompositeDetector",
        "EmailDetector",
        "Finding",
        "IbanDetector",
        "IpDetector",
        "Kind",
        "NationalIdDetector",
        "PatternDetector",
        "PhoneDetector",
        "PrivacyExample",
        "PrivacyGate",
        "PrivacyPolicy",
        "PrivacySettings",
        "PrivacyStats",
        "PrivateDataDetector",
        "SecretDetector",
        "TextField",
        "Unscanned",
        "Verdict",
        "build_gate",
        "decide_answer",
        "decide_question",
        "default_detector",
        "load_privacy_corpus",
        "redact",
        "replace_texts",
        "request_texts",
        "response_texts",
    ]
    for name in privacy.__all__:
        assert getattr(privacy, name) is not None
