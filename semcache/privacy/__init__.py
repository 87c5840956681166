"""Private-data detection and the gate that keeps private data out of the cache.

Its packages are in the base install, imported on first scan; a missing one raises
:class:`~semcache.errors.MissingDependency` naming the ``privacy`` extra.
"""

from __future__ import annotations

from semcache.privacy.composite import ALL_KINDS, CompositeDetector, default_detector
from semcache.privacy.corpus import PrivacyExample, load_privacy_corpus
from semcache.privacy.detectors.email import EmailDetector
from semcache.privacy.detectors.financial import CardDetector, IbanDetector
from semcache.privacy.detectors.national_id import NationalIdDetector
from semcache.privacy.detectors.network import IpDetector
from semcache.privacy.detectors.patterns import PatternDetector
from semcache.privacy.detectors.phone import PhoneDetector
from semcache.privacy.detectors.secrets import SecretDetector
from semcache.privacy.findings import Finding, Kind, PrivateDataDetector
from semcache.privacy.gate import (
    AnswerVerdict,
    PrivacyGate,
    PrivacyPolicy,
    PrivacyStats,
    Unscanned,
    Verdict,
    decide_answer,
    decide_question,
)
from semcache.privacy.redact import redact
from semcache.privacy.settings import PrivacySettings, build_gate
from semcache.privacy.walk import TextField, replace_texts, request_texts, response_texts

__all__ = [
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
