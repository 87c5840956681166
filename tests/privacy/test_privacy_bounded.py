"""Bounded work per text: every detector's cost grows linearly with adversarial input, a text
too dense to afford raises ScanLimitExceeded, and the gate turns both that and a text over its
byte cap into a private, unstored verdict that says why."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import random
import sys
import threading
import time

import pytest

from semcache.errors import ScanLimitExceeded, ScanTimedOut
from semcache.pipeline.privacy import ScanRunner
from semcache.privacy import (
    CardDetector,
    EmailDetector,
    IbanDetector,
    IpDetector,
    Kind,
    NationalIdDetector,
    PhoneDetector,
    PrivacyGate,
    PrivacyPolicy,
    PrivacySettings,
    SecretDetector,
    Unscanned,
    build_gate,
    decide_answer,
    default_detector,
)
from semcache.privacy.deadline import check_deadline, scan_deadline
from semcache.privacy.detectors import phone
from semcache.privacy.detectors.secrets import random_looking

NO_STORE, REDACT = PrivacyPolicy.NO_STORE, PrivacyPolicy.REDACT


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def adversarial(size: int) -> dict[str, str]:
    """Inputs that once cost some detector far more than their length suggests."""
    rng = random.Random(7)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    return {
        "digit_groups": _repeat("123 456 789 012 ", size),
        "digit_run": _repeat("1234567890", size),
        "word_chars": "a" * size,
        "email_fragments": _repeat("a.b@", size),
        "base64": "".join(rng.choice(alphabet) for _ in range(size)),
        "dotted": _repeat("1.2.", size),
        "iban_like": _repeat("DE12" + "3" * 30 + " ", size),
        "card_groups": _repeat("4562 ", size),
    }


DETECTORS = {
    "email": EmailDetector(),
    "phone": PhoneDetector(),
    "card": CardDetector(),
    "iban": IbanDetector(),
    "national_id": NationalIdDetector(),
    "ip": IpDetector(),
    "secret": SecretDetector(),
}


def _cpu(detector, text: str) -> float:
    start = time.process_time()
    with contextlib.suppress(ScanLimitExceeded):
        detector.detect(text)
    return time.process_time() - start


@pytest.mark.parametrize("name", sorted(DETECTORS))
def test_every_detector_scans_256_kb_of_adversarial_text_in_bounded_cpu(name: str) -> None:
    # Generous for a loaded 2-core machine; the unbounded phone detector took ~128 CPU-s on
    # the digit groups alone, the card detector ~0.75.
    detector = DETECTORS[name]
    detector.detect("warm up 4111 1111 1111 1111 +1 415-555-2671 DE89370400440532013000")
    for kind, text in adversarial(256 * 1024).items():
        assert _cpu(detector, text) < 1.5, f"{name} on {kind}"


def test_phone_digit_groups_are_cut_by_the_work_budget_not_scanned_for_minutes() -> None:
    text = _repeat("123 456 789 012 ", 1024 * 1024)
    start = time.process_time()
    with pytest.raises(ScanLimitExceeded):
        PhoneDetector().detect(text)
    assert time.process_time() - start < 3.0  # unbounded: ~500 CPU-s


def test_phone_budget_grows_with_the_text() -> None:
    short = phone._Tries(0)
    long = phone._Tries(1024 * 1024)
    assert short.left == phone.TRIES_FLOOR
    assert long.left == phone.TRIES_FLOOR + 1024 * 1024 // phone.BYTES_PER_TRY


def test_phone_numbers_are_found_across_a_long_text() -> None:
    prose = "The quarterly report lists revenue by region and product line. " * 2000
    text = prose + "Call me at (206) 794-7729 tomorrow. " + prose + "或拨打 13912345678。"
    found = PhoneDetector().detect(text)
    assert [text[f.start : f.end] for f in found] == ["(206) 794-7729", "13912345678"]


def test_a_phone_number_with_an_extension_keeps_it() -> None:
    text = "x" * 5000 + " reach us at +1 415-555-2671 ext. 1234 please"
    (found,) = PhoneDetector().detect(text)
    assert text[found.start : found.end].startswith("+1 415-555-2671")
    assert text[found.end - 4 : found.end] == "1234"


def test_cards_and_ibans_are_still_found_after_the_shortcuts() -> None:
    text = "pay 4111 1111 1111 1111 or 4111-1111-1111-1111 to DE89 3704 0044 0532 0130 00 now"
    kinds = sorted(f.kind.value for f in default_detector().detect(text))
    assert kinds == ["card", "card", "iban"]
    # a card inside a longer rejected run is still found at its own group boundary
    assert CardDetector().detect("ref 9999 4111 1111 1111 1111")[0].start == 9


def chat(text: str) -> dict:
    return {"model": "m", "messages": [{"role": "user", "content": text}]}


@pytest.mark.parametrize("policy", [NO_STORE, REDACT])
def test_a_request_over_the_byte_cap_is_private_unscanned(policy: PrivacyPolicy) -> None:
    gate = PrivacyGate(default_detector(), max_scan_bytes=1000)
    verdict = gate.inspect(chat("What is the capital of France? " * 40), policy)
    assert verdict.unscanned is Unscanned.OVERSIZED
    assert verdict.private and not verdict.store and not verdict.lookup_semantic
    assert not verdict.store_semantic and verdict.redacted_request is None
    assert verdict.labels == ("oversized",)
    stats = gate.stats()
    assert (stats.oversized, stats.private_questions, stats.not_stored) == (1, 1, 1)


def test_the_cap_counts_utf8_bytes_of_every_message() -> None:
    gate = PrivacyGate(default_detector(), max_scan_bytes=12)
    two = {"messages": [{"role": "user", "content": "héllo"}, {"role": "user", "content": "ab"}]}
    assert gate.inspect(two, NO_STORE).unscanned is None  # 6 + 2 bytes
    assert gate.inspect(chat("日本語の質問"), NO_STORE).unscanned is Unscanned.OVERSIZED  # 18
    assert gate.inspect(chat("\ud800 lone"), NO_STORE).unscanned is None


def test_a_text_a_detector_cannot_afford_is_private_unscanned() -> None:
    gate = PrivacyGate(default_detector(), max_scan_bytes=None)
    verdict = gate.inspect(chat(_repeat("123 456 789 012 ", 64 * 1024)), REDACT)
    assert verdict.unscanned is Unscanned.OVERSIZED
    assert not verdict.store and verdict.redacted_request is None


def test_a_clean_request_under_the_cap_is_scanned_as_before() -> None:
    gate = build_gate(PrivacySettings(max_scan_bytes=100))
    verdict = gate.inspect(chat("mail me at a.b@corp.io"), NO_STORE)
    assert verdict.unscanned is None and verdict.kinds == {Kind.EMAIL}
    assert verdict.labels == ("email",)
    assert gate.inspect(chat("hello"), NO_STORE).private is False


def test_an_answer_over_the_cap_is_not_stored() -> None:
    gate = PrivacyGate(default_detector(), max_scan_bytes=100)
    question = gate.inspect(chat("hello"), NO_STORE)
    response = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "x" * 200}}]}
    checked = gate.inspect_answer(response, question)
    assert not checked.store and checked.unscanned is Unscanned.OVERSIZED
    assert gate.stats().answers_not_stored == 1 and gate.stats().oversized == 1


def test_an_unscanned_answer_is_never_stored_even_under_redact() -> None:
    gate = PrivacyGate(default_detector())
    question = gate.inspect(chat("hello"), REDACT)
    assert decide_answer(question, {}, None, Unscanned.TIMED_OUT).store is False


def test_the_default_cap_is_documented_and_bounded() -> None:
    field = PrivacySettings.model_fields["max_scan_bytes"]
    assert PrivacySettings().max_scan_bytes == 262_144
    assert "bytes" in (field.description or "")


class _Slow:
    """A detector that scans forever but checks the deadline, as the phone detector does."""

    def detect(self, text: str) -> list:
        while True:
            check_deadline()


def test_a_scan_past_its_deadline_stops_and_is_private_unscanned() -> None:
    gate = PrivacyGate(_Slow())
    start = time.monotonic()
    with scan_deadline(time.monotonic() + 0.05):
        verdict = gate.assess(chat("hello"), NO_STORE)
    assert time.monotonic() - start < 5
    assert verdict.unscanned is Unscanned.TIMED_OUT and not verdict.store
    assert verdict.labels == ("scan_timeout",)
    gate.record(verdict)
    assert gate.stats().scan_timeouts == 1 and gate.stats().not_stored == 1


def test_the_scan_runner_gives_up_at_the_deadline_and_the_thread_stops() -> None:
    gate = PrivacyGate(_Slow())
    runner = ScanRunner(0.1)

    async def scan() -> object:
        return await runner.run(gate.assess, chat("hello"), NO_STORE)

    result = asyncio.run(scan())  # the thread may see its deadline first: same verdict
    assert result is None or result.unscanned is Unscanned.TIMED_OUT
    deadline = time.monotonic() + 10
    while any(t.name.startswith("semcache-scan") and _busy(t) for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the scan thread kept running past its deadline"
        time.sleep(0.05)


def _busy(thread: threading.Thread) -> bool:
    frame = sys._current_frames().get(thread.ident or -1)
    while frame is not None:
        if frame.f_code.co_name == "detect":
            return True
        frame = frame.f_back
    return False


def _stopped() -> threading.Event:
    stop = threading.Event()
    stop.set()
    return stop


def test_a_stopped_scan_ends_inside_the_detectors_that_read_a_text_many_times() -> None:
    """Secrets, national IDs and the weighing of one long token each check the stop event
    themselves, so a megabyte in one detector is not read to its end after a stop."""
    token = "aB3xY9QzR7mK" * 1000  # one long random-looking run
    with scan_deadline(None, _stopped()):
        for detect in (
            SecretDetector().detect,
            NationalIdDetector().detect,
            CardDetector().detect,
            IbanDetector().detect,
        ):
            with pytest.raises(ScanTimedOut):
                detect(token + " 123-45-6789 4562 4562 4562 4562 DE12 3333 3333 3333 3333 33")
        with pytest.raises(ScanTimedOut):
            random_looking(token, context=False)


def test_the_scan_runner_loads_the_detector_libraries_in_its_pool() -> None:
    loaded: list[str] = []
    done = threading.Event()

    class _Lib:
        def detect(self, text: str) -> list:
            return []

        def load(self) -> None:
            loaded.append(threading.current_thread().name)
            done.set()

    runner = ScanRunner(1.0)
    runner.preload(PrivacyGate(default_detector(extra=[_Lib()])).load)
    assert done.wait(30), "the preload never ran"
    assert loaded[0].startswith("semcache-scan")


class _Overlap:
    """Notes how many long texts it was scanning at once, and whether a short one ran while a
    long one was being scanned."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.long_now = self.most_long = 0
        self.short_beside_long = threading.Event()
        self.long_started = threading.Event()

    def detect(self, text: str) -> list:
        if len(text) < 1000:
            if self.long_now:
                self.short_beside_long.set()
            return []
        with self._lock:
            self.long_now += 1
            self.most_long = max(self.most_long, self.long_now)
        self.long_started.set()
        time.sleep(0.2)
        with self._lock:
            self.long_now -= 1
        return []


def test_long_texts_are_scanned_one_at_a_time_and_short_ones_beside_them() -> None:
    """Scans hold the GIL: several long ones at once kept a stop request (and the event loop)
    waiting on each in turn, so a long text waits for the long scan ahead of it."""
    detector = _Overlap()
    gate = PrivacyGate(detector, long_text_chars=1000)
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        longs = [pool.submit(gate.assess, chat("x" * 5000), NO_STORE) for _ in range(4)]
        assert detector.long_started.wait(10)
        short = pool.submit(gate.assess, chat("hello"), NO_STORE)
        assert short.result(timeout=10).private is False
        assert all(not f.result(timeout=30).private for f in longs)
    assert detector.most_long == 1
    assert detector.short_beside_long.is_set()


def test_a_long_text_waiting_for_its_turn_stops_at_its_deadline() -> None:
    release = threading.Event()

    class _Holds:
        def detect(self, text: str) -> list:
            release.wait(30)
            return []

    gate = PrivacyGate(_Holds(), long_text_chars=1000)
    ahead = threading.Thread(target=gate.assess, args=(chat("x" * 5000), NO_STORE))
    ahead.start()
    try:
        time.sleep(0.2)  # the scan ahead holds the turn
        start = time.monotonic()
        with scan_deadline(time.monotonic() + 0.1):
            verdict = gate.assess(chat("y" * 5000), NO_STORE)
        assert time.monotonic() - start < 5
    finally:
        release.set()
        ahead.join()
    assert verdict.unscanned is Unscanned.TIMED_OUT and not verdict.store
