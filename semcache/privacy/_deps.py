"""Lazy imports of the ``privacy`` extra's packages: a missing one names the extra to install."""

from __future__ import annotations

from types import ModuleType

from semcache.embedders._common import import_optional

EXTRA = "privacy"


def phonenumbers() -> ModuleType:
    return import_optional("phonenumbers", package="phonenumbers", extra=EXTRA)


def stdnum(module: str) -> ModuleType:
    """``stdnum.<module>``, e.g. ``stdnum("cn.ric")``."""
    return import_optional(f"stdnum.{module}", package="python-stdnum", extra=EXTRA)


def detect_secrets_plugin(module: str) -> ModuleType:
    """``detect_secrets.plugins.<module>``, e.g. ``detect_secrets_plugin("aws")``."""
    return import_optional(
        f"detect_secrets.plugins.{module}", package="detect-secrets", extra=EXTRA
    )
