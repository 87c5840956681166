"""``PrivacySettings``: the private-data gate's configuration, mounted by CacheSettings.

Only the composition root reads it: :func:`build_gate` turns it into a :class:`PrivacyGate`,
and :meth:`PrivacySettings.policy_for` resolves a request's policy from its namespace and an
optional per-request control.
"""

from __future__ import annotations

from pydantic import ConfigDict, Field, field_validator

from semcache.config.check import SettingsSection
from semcache.errors import ConfigError
from semcache.privacy.composite import ALL_KINDS, default_detector
from semcache.privacy.detectors.patterns import compile_patterns
from semcache.privacy.detectors.phone import DEFAULT_REGIONS
from semcache.privacy.findings import Kind
from semcache.privacy.gate import PrivacyGate, PrivacyPolicy

_STRICTNESS = {PrivacyPolicy.OFF: 0, PrivacyPolicy.REDACT: 1, PrivacyPolicy.NO_STORE: 2}


class PrivacySettings(SettingsSection):
    """The private-data gate (``SEMCACHE_PRIVACY__*`` once mounted as ``privacy``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    policy: PrivacyPolicy = Field(
        PrivacyPolicy.NO_STORE,
        description="Default policy for every namespace: off, no-store or redact.",
    )
    namespaces: dict[str, PrivacyPolicy] = Field(
        default_factory=dict, description="Per-namespace policy overriding `policy`."
    )
    kinds: frozenset[Kind] = Field(
        ALL_KINDS, description="Kinds of private data detected; others are ignored."
    )
    patterns: dict[str, str] = Field(
        default_factory=dict,
        description="Extra named regexes, reported as kind `custom` with their name.",
    )
    phone_regions: tuple[str, ...] = Field(
        DEFAULT_REGIONS,
        min_length=1,
        description="ISO region codes whose national phone formats are recognised "
        "(numbers written with + are recognised for every country).",
    )
    ip_public_only: bool = Field(
        True, description="Flag only globally routable IP addresses (not LAN or loopback)."
    )
    check_answers: bool = Field(True, description="Also scan upstream answers before storing them.")
    max_scan_bytes: int | None = Field(
        262_144,
        ge=0,
        description="Most UTF-8 bytes of text scanned per request (and per answer), in bytes; "
        "more is treated as private unscanned (`oversized`: not stored, not shared). Higher "
        "scans longer texts at more CPU per request; null scans everything.",
    )
    scan_timeout_s: float = Field(
        2.0,
        gt=0,
        description="Seconds a scan may take (it runs off the event loop) before the request "
        "is treated as private unscanned (`scan_timeout`: answered, not stored or shared).",
    )
    allow_request_loosen: bool = Field(
        False,
        description="Let a per-request control choose a looser policy than the namespace's "
        "(a request may always choose a stricter one).",
    )

    @field_validator("patterns")
    @classmethod
    def _patterns_compile(cls, value: dict[str, str]) -> dict[str, str]:
        try:
            compile_patterns(value)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return value

    def policy_for(
        self, namespace: str, requested: PrivacyPolicy | str | None = None
    ) -> PrivacyPolicy:
        """The policy for a request in ``namespace``, with an optional per-request choice.

        Strictness: off < redact < no-store. A request may tighten its namespace's policy;
        loosening it needs ``allow_request_loosen`` (otherwise the namespace's policy stands).
        """
        base = self.namespaces.get(namespace, self.policy)
        if requested is None:
            return base
        try:
            wanted = PrivacyPolicy(requested)
        except ValueError:
            raise ConfigError(
                f"privacy policy {requested!r} is not one of {[p.value for p in PrivacyPolicy]}"
            ) from None
        if _STRICTNESS[wanted] >= _STRICTNESS[base] or self.allow_request_loosen:
            return wanted
        return base


def build_gate(settings: PrivacySettings) -> PrivacyGate:
    """The gate these settings describe (no I/O; :meth:`PrivacyGate.load` imports the detector
    libraries)."""
    detector = default_detector(
        kinds=settings.kinds,
        patterns=settings.patterns,
        phone_regions=settings.phone_regions,
        ip_public_only=settings.ip_public_only,
    )
    return PrivacyGate(
        detector, check_answers=settings.check_answers, max_scan_bytes=settings.max_scan_bytes
    )
