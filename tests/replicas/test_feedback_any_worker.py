"""Feedback reaches the answer whichever ``--workers`` process receives it: a semantic hit's
serve id and an exact hit's entry key are both found by the worker that did not serve them
(serve records and entries shared through Redis), and a "wrong" verdict given there withdraws
the answer on every worker.

Measured before: the serve id was known only in the serving process, so feedback that landed
on the other worker was a 404.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from test_restarts_under_traffic import (
    CONFIG,
    KEEP,
    PAIRS,
    PURGED,
    Serve,
    Versioned,
    ask,
    wait_stored,
)

from semcache.testing import FakeOpenAIServer

QUESTION, PARAPHRASE = PAIRS[0]
EXACT_QUESTION = PAIRS[3][0]
AUTH = {"authorization": f"Bearer {KEEP}"}


def ask_until(url: str, question: str, tier: str, timeout_s: float = 120.0) -> httpx.Response:
    """Ask on fresh connections (either worker) until the answer comes from ``tier``."""
    deadline = time.monotonic() + timeout_s
    body = {"model": "fast", "messages": [{"role": "user", "content": question}]}
    while True:
        r = httpx.post(
            f"{url}/v1/chat/completions",
            json=body,
            headers={**AUTH, "connection": "close"},
            timeout=120,
        )
        r.raise_for_status()
        if r.headers.get("x-semcache-tier") == tier:
            return r
        assert time.monotonic() < deadline, f"no {tier} answer within {timeout_s} s"
        time.sleep(0.2)


def feedback_elsewhere(url: str, ref: str, served_by: str, correct: bool) -> httpx.Response:
    """``POST /v1/feedback`` on a worker other than ``served_by``: a kept-alive connection is
    first asked which worker holds it, and used only when it is the other one."""
    for _ in range(200):
        with httpx.Client(timeout=60) as http:
            probe = http.get(f"{url}/healthz")
            if probe.headers["x-semcache-worker"] == served_by:
                continue
            r = http.post(f"{url}/v1/feedback", json={"id": ref, "correct": correct}, headers=AUTH)
            assert r.headers["x-semcache-worker"] not in ("", served_by)
            return r
    pytest.fail("never connected to the other worker")


@pytest.mark.timeout(600)
def test_feedback_on_the_worker_that_did_not_serve_the_answer(written) -> None:
    config, upstream = written
    serve = Serve(config, workers=2)
    serve.start()
    try:
        assert len(serve.wait_ready()) == 2
        url = serve.url
        for question in (QUESTION, EXACT_QUESTION):
            assert ask(url, KEEP, question)[0].startswith("miss")
        wait_stored(url, "team-k", 2)

        # a semantic hit's serve id, given as "wrong" on the other worker: withdrawn everywhere
        hit = ask_until(url, PARAPHRASE, "semantic")
        serve_id, served_by = hit.headers["x-semcache-serve-id"], hit.headers["x-semcache-worker"]
        verdict = feedback_elsewhere(url, serve_id, served_by, correct=False)
        assert verdict.status_code == 200, verdict.text
        assert verdict.json() == {
            "object": "feedback",
            "correct": False,
            "withdrawn": True,
            "labeled": True,
        }
        upstream.version = 2  # from now on a v1 text can only come from the cache
        for _ in range(8):  # fresh connections: both workers
            for text in (QUESTION, PARAPHRASE):
                assert ask(url, KEEP, text)[1] != f"v1 answer to: {QUESTION}"

        # an exact hit's entry key, found in the shared exact tier by the other worker
        exact = ask_until(url, EXACT_QUESTION, "exact")
        key, served_by = exact.headers["x-semcache-key"], exact.headers["x-semcache-worker"]
        right = feedback_elsewhere(url, key, served_by, correct=True)
        assert right.status_code == 200, right.text
        assert right.json()["withdrawn"] is False

        # an id no process served: 404 saying where serve ids are known
        unknown = feedback_elsewhere(url, "0" * 32, "", correct=True)
        assert unknown.status_code == 404
        message = unknown.json()["error"]["message"]
        assert "any process sharing this Redis" in message, message
    finally:
        serve.stop()


@pytest.fixture
def written(tmp_path: Path, redis_url: str):
    with FakeOpenAIServer() as server:
        config = tmp_path / "serve.toml"
        config.write_text(
            CONFIG.format(api_base=server.api_base, keep=KEEP, purged=PURGED, redis_url=redis_url)
        )
        yield config, Versioned(server)
