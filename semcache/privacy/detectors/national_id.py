"""National identity numbers, each validated by python-stdnum (checksum, embedded date, ranges).

Every scheme is a row of data. Distinctive shapes (a Chinese resident ID, a dashed US SSN)
count on their own; a bare digit run with a weak checksum (a Dutch BSN) counts only after a
keyword within ``_WINDOW`` characters, so arbitrary numbers do not trip it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from semcache.privacy import _deps
from semcache.privacy.deadline import check_deadline
from semcache.privacy.detectors._context import preceded_by
from semcache.privacy.findings import Finding, Kind

_WINDOW = 40
"""Characters before a number searched for a scheme's keyword."""

_L = r"(?<![0-9A-Za-z\-])"
_R = r"(?![0-9A-Za-z]|-\d)"


@dataclass(frozen=True, slots=True)
class IdScheme:
    """One national ID format: ``pattern`` finds candidates, ``stdnum.<module>`` validates them.

    ``keywords``: when set, a candidate counts only when one of them precedes it.
    """

    name: str
    pattern: re.Pattern[str]
    module: str
    keywords: re.Pattern[str] | None = None


def _kw(words: str) -> re.Pattern[str]:
    return re.compile(words, re.IGNORECASE)


SCHEMES: tuple[IdScheme, ...] = (
    IdScheme(
        "cn_ric",
        re.compile(
            _L + r"\d{6}(?:18|19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx]" + _R
        ),
        "cn.ric",
    ),
    IdScheme("us_ssn", re.compile(_L + r"\d{3}([- ])\d{2}\1\d{4}" + _R), "us.ssn"),
    IdScheme(
        "us_ssn",
        re.compile(_L + r"\d{9}" + _R),
        "us.ssn",
        _kw(r"\bSSN\b|social security|社会安全号|社保号"),
    ),
    IdScheme("br_cpf", re.compile(_L + r"\d{3}\.\d{3}\.\d{3}-\d{2}" + _R), "br.cpf"),
    IdScheme("br_cpf", re.compile(_L + r"\d{11}" + _R), "br.cpf", _kw(r"\bCPF\b")),
    IdScheme("es_dni", re.compile(_L + r"\d{8}-?[A-Za-z]" + _R), "es.dni"),
    IdScheme("es_nie", re.compile(_L + r"[XYZxyz]-?\d{7}-?[A-Za-z]" + _R), "es.nie"),
    IdScheme(
        "it_codicefiscale",
        re.compile(
            _L + r"[A-Za-z]{6}\d{2}[ABCDEHLMPRSTabcdehlmprst]\d{2}[A-Za-z]\d{3}[A-Za-z]" + _R
        ),
        "it.codicefiscale",
    ),
    IdScheme("in_aadhaar", re.compile(_L + r"[2-9]\d{3}([ -])\d{4}\1\d{4}" + _R), "in_.aadhaar"),
    IdScheme(
        "in_aadhaar",
        re.compile(_L + r"[2-9]\d{11}" + _R),
        "in_.aadhaar",
        _kw(r"aadhaar|aadhar|आधार|UIDAI"),
    ),
    IdScheme("kr_rrn", re.compile(_L + r"\d{6}-\d{7}" + _R), "kr.rrn"),
    IdScheme(
        "nl_bsn",
        re.compile(_L + r"\d{4}\.?\d{2}\.?\d{3}" + _R),
        "nl.bsn",
        _kw(r"\bBSN\b|burgerservicenummer"),
    ),
    IdScheme(
        "ca_sin",
        re.compile(_L + r"\d{3}[- ]?\d{3}[- ]?\d{3}" + _R),
        "ca.sin",
        _kw(r"\bSIN\b|social insurance|NAS\b"),
    ),
    IdScheme(
        "fr_nir",
        re.compile(_L + r"[12](?: ?\d{2}){2} ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}" + _R),
        "fr.nir",
        _kw(r"\bNIR\b|sécurité sociale|securite sociale|numéro de sécu|INSEE"),
    ),
    IdScheme(
        "de_idnr",
        re.compile(_L + r"\d{2} ?\d{3} ?\d{3} ?\d{3}" + _R),
        "de.idnr",
        _kw(r"steuer-?id|steueridentifikationsnummer|\bIdNr\b|tax id"),
    ),
)


class NationalIdDetector:
    """Finds national ID numbers of the given schemes (default: all of :data:`SCHEMES`)."""

    kinds = frozenset({Kind.NATIONAL_ID})

    def __init__(self, schemes: Sequence[IdScheme] = SCHEMES) -> None:
        self._schemes = tuple(schemes)

    def load(self) -> None:
        """Import every scheme's python-stdnum validator."""
        for scheme in self._schemes:
            _deps.stdnum(scheme.module)

    def detect(self, text: str) -> Sequence[Finding]:
        if sum(map(str.isdigit, text)) < 7:
            return []
        findings: list[Finding] = []
        taken: list[tuple[int, int]] = []
        for scheme in self._schemes:
            check_deadline()  # a pass per scheme over the whole text
            if scheme.keywords is not None and scheme.keywords.search(text) is None:
                continue  # no keyword anywhere: no candidate can count
            position = 0
            while (match := scheme.pattern.search(text, position)) is not None:
                check_deadline()  # candidates are tried one start at a time
                start, end = match.span()
                # An ID may start inside a rejected run: "… 3416 8985 5364 4697" after a phone
                # number first matched "3416 8985 5364" (no valid Aadhaar), and a plain
                # finditer resumed after it, so the real one was never tried.
                position = start + 1
                if any(start < t_end and t_start < end for t_start, t_end in taken):
                    continue
                if scheme.keywords is not None and not preceded_by(
                    text, start, scheme.keywords, _WINDOW
                ):
                    continue
                if _deps.stdnum(scheme.module).is_valid(match.group()):
                    findings.append(Finding(Kind.NATIONAL_ID, start, end, scheme.name))
                    taken.append((start, end))
                    position = end
        return findings
