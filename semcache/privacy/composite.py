"""Many detectors as one: per-kind enable, overlap resolution, and the default set.

:class:`CompositeDetector` is itself a :class:`PrivateDataDetector`, so the gate never knows how
many detectors there are or whose they are (a Presidio adapter slots in next to the built-ins).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

from semcache.errors import ConfigError
from semcache.privacy.deadline import check_deadline
from semcache.privacy.detectors.email import EmailDetector
from semcache.privacy.detectors.financial import CardDetector, IbanDetector
from semcache.privacy.detectors.national_id import NationalIdDetector
from semcache.privacy.detectors.network import IpDetector
from semcache.privacy.detectors.patterns import PatternDetector
from semcache.privacy.detectors.phone import DEFAULT_REGIONS, PhoneDetector
from semcache.privacy.detectors.secrets import SecretDetector
from semcache.privacy.findings import Finding, Kind, PrivateDataDetector
from semcache.privacy.redact import PLACEHOLDER, merge

ALL_KINDS: frozenset[Kind] = frozenset(Kind)


class CompositeDetector:
    """Runs every detector, keeps findings of the enabled ``kinds``, merges overlaps (sorted,
    non-overlapping). Matches inside a redaction placeholder are ignored, so detect-then-redact
    is idempotent; a detector none of whose declared ``kinds`` is enabled is not run.
    """

    def __init__(
        self,
        detectors: Sequence[PrivateDataDetector],
        *,
        kinds: Collection[Kind] | None = None,
    ) -> None:
        for index, detector in enumerate(detectors):
            if not isinstance(detector, PrivateDataDetector):
                raise ConfigError(f"detectors[{index}] has no detect(text) method: {detector!r}")
        self.kinds = ALL_KINDS if kinds is None else frozenset(Kind(k) for k in kinds)
        self._detectors = tuple(
            d for d in detectors if not (_declared(d) and not (_declared(d) & self.kinds))
        )

    def load(self) -> None:
        """Import the libraries the detectors need (those with a ``load``), so no scan waits
        on an import, which nothing can interrupt."""
        for detector in self._detectors:
            load = getattr(detector, "load", None)
            if callable(load):
                load()

    def detect(self, text: str) -> Sequence[Finding]:
        found: list[Finding] = []
        for detector in self._detectors:
            check_deadline()  # a scan given a deadline stops between detectors
            found.extend(f for f in detector.detect(text) if f.kind in self.kinds)
        if not found:
            return []
        placeholders = [m.span() for m in PLACEHOLDER.finditer(text)]
        if placeholders:
            found = [f for f in found if not _inside_any(f, placeholders)]
        return merge(found)


def default_detector(
    *,
    kinds: Collection[Kind] | None = None,
    patterns: Mapping[str, str | re.Pattern[str]] | None = None,
    phone_regions: Sequence[str] = DEFAULT_REGIONS,
    ip_public_only: bool = True,
    extra: Sequence[PrivateDataDetector] = (),
) -> CompositeDetector:
    """The built-in detectors (plus user ``patterns`` and ``extra`` detectors) as one."""
    detectors: list[PrivateDataDetector] = [
        EmailDetector(),
        PhoneDetector(phone_regions),
        CardDetector(),
        IbanDetector(),
        NationalIdDetector(),
        IpDetector(public_only=ip_public_only),
        SecretDetector(),
    ]
    if patterns:
        detectors.append(PatternDetector(patterns))
    detectors.extend(extra)
    return CompositeDetector(detectors, kinds=kinds)


def _declared(detector: PrivateDataDetector) -> frozenset[Kind]:
    kinds = getattr(detector, "kinds", None)
    return frozenset(kinds) if kinds is not None else frozenset()


def _inside_any(finding: Finding, spans: list[tuple[int, int]]) -> bool:
    return any(start <= finding.start and finding.end <= end for start, end in spans)
