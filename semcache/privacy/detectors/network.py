"""IP addresses (IPv4 and IPv6), validated by the standard library's ``ipaddress``.

By default only globally routable addresses count (``public_only``): private and reserved
ranges identify nobody. A dotted quad next to a version word, an upgrade verb or a comparison
operator (``numpy>=12.0.4.12``) is a version string, not an address.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence

from semcache.privacy.detectors._context import preceded_by
from semcache.privacy.findings import Finding, Kind

_IPV4 = re.compile(r"(?<![A-Za-z0-9_.\-])(?:\d{1,3}\.){3}\d{1,3}(?![A-Za-z0-9_\-]|\.\d)")
_IPV6 = re.compile(
    r"(?<![A-Za-z0-9_:.])"
    r"(?:[0-9A-Fa-f]{1,4}:|:){1,7}(?::|[0-9A-Fa-f]{1,4})"
    r"(?:%[0-9A-Za-z]+)?"
    r"(?![A-Za-z0-9_:]|\.\d)"
)
_VERSION = re.compile(
    r"(?:(?:\bv|\bversion|\bver\.?|\brelease|\bbuild|\bsection|\bOID|版本|版本号|发布|发行版|第)\s*[:：]?"
    r"|(?:\bupgrade|\bdowngrade|\bupdate|\broll ?back|升级|降级|回退|更新)(?:\s*(?:to|到))?"
    r"|[<>=!~^]=?)\s*$",
    re.IGNORECASE,
)
_VERSION_AFTER = re.compile(r"^\s*(?:版本|版|version\b|release\b)", re.IGNORECASE)
_VERSION_WINDOW = 12


class IpDetector:
    """Finds IPv4 and IPv6 addresses; ``public_only`` keeps globally routable ones only."""

    kinds = frozenset({Kind.IP})

    def __init__(self, *, public_only: bool = True) -> None:
        self._public_only = public_only

    def detect(self, text: str) -> Sequence[Finding]:
        findings: list[Finding] = []
        if "." in text:
            for match in _IPV4.finditer(text):
                if preceded_by(text, match.start(), _VERSION, _VERSION_WINDOW) or (
                    _VERSION_AFTER.match(text, match.end()) is not None
                ):
                    continue
                if self._keep(match.group()):
                    findings.append(Finding(Kind.IP, match.start(), match.end(), "ipv4"))
        if text.count(":") >= 2:
            for match in _IPV6.finditer(text):
                if self._keep(match.group()):
                    findings.append(Finding(Kind.IP, match.start(), match.end(), "ipv6"))
        return findings

    def _keep(self, candidate: str) -> bool:
        try:
            address = ipaddress.ip_address(candidate)
        except ValueError:
            return False
        return address.is_global if self._public_only else True
