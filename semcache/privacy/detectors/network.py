"""IP addresses (IPv4 and IPv6), validated by the standard library's ``ipaddress``.

By default only globally routable addresses count (``public_only``): loopback, private LAN,
link-local, documentation and other reserved ranges identify nobody (``127.0.0.1:8000``,
``192.168.1.1`` in a router question). A dotted quad right after a version word (``version
1.2.3.4``, ``v10.0.0.1``, ``版本 2.1.0.3``), an upgrade verb (``downgrade to 5.1.9.0``) or a
comparison operator (``numpy>=12.0.4.12``), or right before a version word (``7.7.8.15版本``),
is a version string, not an address. A product name followed by a four-part version (``Chrome
11.1.2.11``) or a verb further back (``downgrade the driver to 5.1.9.0``) is not recognised: a
known false positive when the version happens to be a public address.
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
