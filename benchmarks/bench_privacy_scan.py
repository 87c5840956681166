"""CPU seconds per MB to scan adversarial text, per detector, against an unbounded baseline.

For each input (1 MB of digit groups, a digit run, word characters, email fragments,
base64-ish text, dotted numbers, IBAN-like runs, card-like groups) it prints the CPU-s each
built-in detector spends on the whole MB (``limit`` when it stopped at its work budget), the
composite detector's total, and the baseline measured in the same run: libphonenumber's own
``PhoneNumberMatcher`` (what the phone detector used to run over the whole text, before its
recovery passes) on the first 10 KB, extrapolated to 1 MB. The gate itself never scans more
than ``privacy.max_scan_bytes`` (256 KB by default) of a request. The ``gap`` column is the
longest CPU time the composite scan ran without checking its deadline or stop event (how
late a scan nobody waits for any more can stop), against the whole scan's time (``share``).

Run: ``python benchmarks/bench_privacy_scan.py`` (about a minute on 2 cores).
"""

from __future__ import annotations

import contextlib
import itertools
import random
import threading
import time

import phonenumbers

from semcache.errors import ScanLimitExceeded
from semcache.privacy import (
    CardDetector,
    EmailDetector,
    IbanDetector,
    IpDetector,
    NationalIdDetector,
    PhoneDetector,
    SecretDetector,
    default_detector,
)
from semcache.privacy.deadline import scan_deadline

MB = 1024 * 1024
BASELINE_BYTES = 10 * 1024


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def inputs(size: int) -> dict[str, str]:
    rng = random.Random(7)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    return {
        "digit_groups": _repeat("123 456 789 012 ", size),
        "digit_run": _repeat("1234567890", size),
        "word_chars": "a" * size,
        "email_frags": _repeat("a.b@", size),
        "base64": "".join(rng.choice(alphabet) for _ in range(size)),
        "dotted": _repeat("1.2.", size),
        "iban_like": _repeat("DE12" + "3" * 30 + " ", size),
        "card_groups": _repeat("4562 ", size),
    }


def cpu(scan, text: str) -> tuple[float, bool]:
    start = time.process_time()
    try:
        scan(text)
    except ScanLimitExceeded:
        return time.process_time() - start, True
    return time.process_time() - start, False


class _Checks(threading.Event):
    """A stop event never set that notes when a scan checked it."""

    def __init__(self) -> None:
        super().__init__()
        self.at: list[float] = []

    def is_set(self) -> bool:
        self.at.append(time.process_time())
        return False


def longest_gap(scan, text: str) -> float:
    """The longest CPU time ``scan`` ran between two checks of its stop event."""
    checks = _Checks()
    start = time.process_time()
    with scan_deadline(None, checks), contextlib.suppress(ScanLimitExceeded):
        scan(text)
    points = [start, *checks.at, time.process_time()]
    return max(b - a for a, b in itertools.pairwise(points))


def baseline(text: str) -> float:
    """libphonenumber's matcher over the text for both default regions, no budget."""
    start = time.process_time()
    for region in ("CN", "US"):
        matcher = phonenumbers.PhoneNumberMatcher(
            text, region, leniency=phonenumbers.Leniency.VALID, max_tries=1 << 62
        )
        for _ in matcher:
            pass
    return time.process_time() - start


def main() -> None:
    detectors = {
        "email": EmailDetector(),
        "phone": PhoneDetector(),
        "card": CardDetector(),
        "iban": IbanDetector(),
        "nat_id": NationalIdDetector(),
        "ip": IpDetector(),
        "secret": SecretDetector(),
    }
    composite = default_detector()
    composite.detect("warm 4111 1111 1111 1111 +1 415-555-2671 DE89370400440532013000 a@b.io")
    names = list(detectors)
    print("CPU-s per MB (limit: stopped at the detector's work budget, treated as private)")
    print(
        f"{'input':13}"
        + "".join(f"{n:>9}" for n in names)
        + f"{'all':>9}{'baseline':>10}{'ratio':>8}{'gap':>8}{'share':>7}"
    )
    for kind, text in inputs(MB).items():
        row = []
        for name in names:
            seconds, limited = cpu(detectors[name].detect, text)
            row.append(f"{seconds:8.3f}{'*' if limited else ' '}")
        total, _ = cpu(composite.detect, text)
        base = baseline(text[:BASELINE_BYTES]) * MB / BASELINE_BYTES
        ratio = base / total if total > 0 else float("inf")
        gap = longest_gap(composite.detect, text)
        share = gap / total if total > 0 else 0.0
        print(
            f"{kind:13}"
            + "".join(row)
            + f"{total:9.3f}{base:10.1f}{ratio:7.0f}x{gap:8.3f}{share:7.2f}"
        )
    print("* = limit. baseline: PhoneNumberMatcher (CN, US) on 10 KB x 102.4; ratio = baseline/all")
    print("gap: longest CPU-s between deadline checks in the composite scan; share = gap / all")


if __name__ == "__main__":
    main()
