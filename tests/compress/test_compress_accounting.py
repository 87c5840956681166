"""CompressionLedger: savings in tokens and money, refusals and lost kinds, apart from the cache."""

from __future__ import annotations

import pytest

from semcache.compress import Compressed, CompressionLedger, Refusal, Rejection, input_cost_usd


def test_money_saved_uses_the_models_input_price() -> None:
    assert input_cost_usd("gpt-4o-mini", 1000) == pytest.approx(0.00015)
    assert input_cost_usd("gpt-4o-mini", 0) == 0.0
    assert input_cost_usd("no-such-model-xyz", 1000) == 0.0


def test_ledger_counts_used_and_refused_separately() -> None:
    ledger = CompressionLedger()
    used = Compressed([], 1000, 700, "rules", overhead_usd=0.00001)
    lossy = Rejection("model:x", Refusal.LOST_DETAIL, ("number", "negation"))
    refused = Compressed([], 500, 500, "chain", Refusal.LOST_DETAIL, (lossy,))
    assert ledger.record(used, model="gpt-4o-mini") == pytest.approx(300 * 0.15 / 1e6)
    assert ledger.record(refused, model="gpt-4o-mini") == 0.0
    totals = ledger.totals()
    assert (totals.requests, totals.used) == (2, 1)
    assert totals.tokens_saved == 300 and totals.tokens_before == 1500
    assert totals.refused == {"lost_detail": 1}
    assert totals.rejections == {"lost_detail": 1}
    assert totals.lost == {"number": 1, "negation": 1}
    assert totals.saved_usd == pytest.approx(0.000045)
    assert totals.net_saved_usd == pytest.approx(0.000035)
    assert totals.saved_ratio == pytest.approx(0.2)
