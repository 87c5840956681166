"""The demo's request stream and one short replay through the full cache."""

from __future__ import annotations

import asyncio

from semcache.cli.demo import build_stream, run_demo
from semcache.datasets import load_shipped_pairs


def test_stream_asks_every_first_question_before_its_follow_up():
    stream = build_stream(load_shipped_pairs(), pairs_per_tenant=10, repeats=6, bursts=2)
    first_seen = {}
    for i, step in enumerate(stream):
        first_seen.setdefault((step.tenant, step.text), i)
    kinds = {s.kind for s in stream}
    assert {"first", "repeat", "paraphrase", "hard_negative", "other_tenant", "burst"} <= kinds
    for i, step in enumerate(stream):
        if step.kind == "repeat":
            assert first_seen[(step.tenant, step.text)] < i
    assert stream == build_stream(load_shipped_pairs(), pairs_per_tenant=10, repeats=6, bursts=2)


def test_short_replay_serves_no_cross_tenant_answer(minilm):
    stream = build_stream(
        load_shipped_pairs(), pairs_per_tenant=6, repeats=6, bursts=1, burst_size=4
    )
    lines: list[str] = []
    report = run_demo(
        threshold=0.9, embedder=minilm, upstream_delay_s=0.0, stream=stream, progress=lines.append
    )
    assert lines == [  # long steps are announced, never minutes of silence
        "loading the embedding model and opening the store ...",
        f"replaying {sum(s.concurrency for s in stream)} requests against a simulated LLM ...",
    ]
    assert report.requests == sum(s.concurrency for s in stream)
    assert report.cross_tenant == 0
    assert report.tiers["exact"] >= 6  # every repeat is an exact hit
    assert report.upstream_calls < report.requests
    assert report.as_dict()["hit_rate"] > 0


async def test_run_demo_works_inside_a_running_loop(minilm):
    stream = build_stream(load_shipped_pairs(), pairs_per_tenant=2, repeats=1, bursts=0)
    report = await asyncio.to_thread(lambda: None) or run_demo(
        threshold=0.9, embedder=minilm, upstream_delay_s=0.0, stream=stream
    )
    assert report.requests == len(stream)
