"""The tuning loop in Prometheus: the live false-hit estimate, its alert, feedback, shadow cost.

Refreshed from ``cache.stats().tuning`` at each scrape. Series per namespace:
``semcache_false_hit_rate{namespace}`` (the weighted estimate), ``_low`` / ``_high`` (its 95%
interval), ``semcache_false_hit_alert{namespace}`` (1 only when the lower bound exceeds
``semcache_false_hit_delta``: evidence, never at 0 wrong),
``semcache_false_hit_verdicts{namespace}``. Namespaces are
named by clients, so only the ``MAX_NAMESPACES`` with the most verdicts are exported (label
values stay bounded). Counters: ``semcache_feedback_total{verdict}``,
``semcache_shadow_verdicts_total{outcome}``, ``semcache_shadow_calls_total``,
``semcache_shadow_tokens_total``, ``semcache_shadow_cost_usd_total``.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from semcache.tuning.results import TuningStats

#: Most namespaces exported with estimate series.
MAX_NAMESPACES = 50


class TuningCollector(Collector):
    def __init__(self) -> None:
        self.stats: TuningStats | None = None

    def collect(self) -> Iterator[Metric]:
        t = self.stats
        if t is None:
            return
        yield GaugeMetricFamily(
            "semcache_false_hit_delta", "Tolerated false-hit rate (tuning.delta).", value=t.delta
        )
        names = sorted(t.estimates, key=lambda ns: -t.estimates[ns].verdicts)[:MAX_NAMESPACES]
        series = {
            "semcache_false_hit_rate": (
                "Live false-hit rate of semantic hits (weighted estimate from shadow verdicts).",
                "rate",
            ),
            "semcache_false_hit_rate_low": ("Lower end of its 95% interval.", "low"),
            "semcache_false_hit_rate_high": ("Upper end of its 95% interval.", "high"),
            "semcache_false_hit_verdicts": ("Shadow verdicts the estimate uses.", "verdicts"),
        }
        for name, (doc, attr) in series.items():
            family = GaugeMetricFamily(name, doc, labels=["namespace"])
            for ns in sorted(names):
                family.add_metric([ns], float(getattr(t.estimates[ns], attr)))
            yield family
        alert = GaugeMetricFamily(
            "semcache_false_hit_alert",
            "1 when the false-hit rate's 95% lower bound exceeds the tolerated delta (evidence).",
            labels=["namespace"],
        )
        for ns in sorted(names):
            alert.add_metric([ns], 1.0 if t.estimates[ns].alert else 0.0)
        yield alert
        feedback = CounterMetricFamily(
            "semcache_feedback", "Feedback on cached answers, by verdict.", labels=["verdict"]
        )
        feedback.add_metric(["right"], t.feedback_right)
        feedback.add_metric(["wrong"], t.feedback_wrong)
        yield feedback
        verdicts = CounterMetricFamily(
            "semcache_shadow_verdicts", "Shadow verification verdicts.", labels=["outcome"]
        )
        verdicts.add_metric(["agree"], t.shadow_agree)
        verdicts.add_metric(["disagree"], t.shadow_disagree)
        verdicts.add_metric(["skipped"], t.shadow_skipped)
        yield verdicts
        yield CounterMetricFamily(
            "semcache_shadow_calls",
            "Upstream calls made by shadow verification.",
            value=t.shadow_calls,
        )
        yield CounterMetricFamily(
            "semcache_shadow_tokens",
            "Tokens spent by shadow verification (upstream and judge).",
            value=t.shadow_tokens,
        )
        yield CounterMetricFamily(
            "semcache_shadow_cost_usd",
            "USD spent by shadow verification (upstream and judge).",
            value=t.shadow_cost_usd,
        )

    def describe(self) -> Iterator[Metric]:
        return iter(())
