"""Redaction: placeholders, merging, stability, idempotence."""

from __future__ import annotations

import pytest

from semcache.errors import ConfigError
from semcache.privacy import Finding, Kind, default_detector, redact
from semcache.privacy.composite import CompositeDetector
from semcache.privacy.detectors.email import EmailDetector
from semcache.privacy.redact import merge

TEXT = (
    "I am EMP-123456, mail alice.w@corp-mail.net or call +1 415-555-2671; card "
    "4111 1111 1111 1111, ip 8.8.8.8, key AKIAIOSFODNN7EXAMPLE 身份证11010519491231002X, "
    "IBAN DE89 3704 0044 0532 0130 00"
)


@pytest.fixture(scope="module")
def detector():
    return default_detector(patterns={"employee_id": r"EMP-\d{6}"})


def test_every_kind_gets_its_placeholder(detector):
    assert redact(TEXT, detector.detect(TEXT)) == (
        "I am [EMPLOYEE_ID], mail [EMAIL] or call [PHONE]; card [CARD], ip [IP], key [SECRET] "
        "身份证[NATIONAL_ID], IBAN [IBAN]"
    )


def test_redaction_is_idempotent_and_stable(detector):
    once = redact(TEXT, detector.detect(TEXT))
    assert detector.detect(once) == []
    assert redact(once, detector.detect(once)) == once
    assert redact(TEXT, list(reversed(detector.detect(TEXT)))) == once


def test_no_findings_leaves_text_alone():
    assert redact("nothing here", []) == "nothing here"


def test_overlapping_spans_merge_and_the_container_names_them():
    text = "0123456789abcdef"
    inner = Finding(Kind.CARD, 4, 8, "visa")
    outer = Finding(Kind.IBAN, 2, 12, "iban")
    assert redact(text, [inner, outer]) == "01[IBAN]cdef"
    partial = Finding(Kind.PHONE, 10, 14, "phone")
    assert redact(text, [outer, partial]) == "01[IBAN]ef"  # priority: IBAN before PHONE
    assert merge([Finding(Kind.EMAIL, 0, 3), Finding(Kind.EMAIL, 3, 5)]) == [
        Finding(Kind.EMAIL, 0, 5)
    ]  # touching spans become one placeholder


def test_finding_beyond_the_text_is_refused():
    with pytest.raises(ConfigError, match="beyond"):
        redact("short", [Finding(Kind.EMAIL, 2, 40)])


def test_finding_validates_its_fields():
    with pytest.raises(ConfigError):
        Finding(Kind.EMAIL, 5, 5)
    with pytest.raises(ConfigError):
        Finding("email", 0, 1)  # type: ignore[arg-type]


def test_composite_ignores_matches_inside_placeholders():
    class Greedy:
        kinds = frozenset({Kind.CUSTOM})

        def detect(self, text):
            start = text.find("EMAIL")
            return [] if start < 0 else [Finding(Kind.CUSTOM, start, start + 5, "word")]

    detector = CompositeDetector([EmailDetector(), Greedy()])
    assert detector.detect("see [EMAIL]") == []
    assert [f.kind for f in detector.detect("EMAIL me")] == [Kind.CUSTOM]


def test_composite_enables_kinds(detector):
    only_email = default_detector(kinds=[Kind.EMAIL])
    assert {f.kind for f in only_email.detect(TEXT)} == {Kind.EMAIL}
    assert {f.kind for f in detector.detect(TEXT)} == set(Kind)


def test_composite_rejects_non_detectors():
    with pytest.raises(ConfigError, match=r"detectors\[0\]"):
        CompositeDetector([object()])  # type: ignore[list-item]
