"""A labeled, synthetic traffic stream with drift, to exercise the tuning loop offline.

Every text is generated from small word lists. An *intent* is an (attribute, entity) pair; a
query phrases one intent with a template and the upstream's answer names the intent, so
whether a cached answer was right is known exactly. :class:`KeywordEmbedder` is a weighted
bag of words, so intents sharing an entity or attribute come out close and a threshold is a
trade-off. Drift: a new topic and chattier phrasing.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from semcache.tuning.estimate import Estimate, weighted_rate

PLACES = (
    "paris",
    "lyon",
    "berlin",
    "munich",
    "madrid",
    "seville",
    "rome",
    "milan",
    "vienna",
    "prague",
    "dublin",
    "lisbon",
    "oslo",
    "athens",
    "warsaw",
    *(
        f"{side} {base}"
        for side in ("north", "south", "new", "west", "east")
        for base in ("dakota", "york", "haven", "field", "port", "ridge", "wood", "bridge")
    ),
)
PLACE_FACTS = (
    "population",
    "mayor",
    "area",
    "timezone",
    "main airport",
    "average rent",
    "average salary",
    "crime rate",
    "tax rate",
    "birth rate",
)
DEVICES = (
    "phone x1",
    "phone x2",
    "pixel eight",
    "pixel nine",
    "galaxy s23",
    "galaxy s24",
    "surface pro",
    "surface laptop",
    "book air",
    "book pro",
    "tab one",
    "tab two",
)
DEVICE_FACTS = ("battery life", "price", "weight", "screen size", "release date", "warranty")
PLAIN = (
    "what is the {a} of {e}",
    "tell me the {a} of {e}",
    "{e} {a}",
    "what is {e} {a}",
    "{a} of {e} please",
)
CHATTY = (
    "hey could you quickly look up the {a} for {e} for me",
    "i would really like to know the {a} of {e} thanks",
    "{e} and its {a} , need it asap",
    "so what would you say the {a} of {e} is nowadays",
)

_TOKEN = re.compile(r"[a-z0-9]+")
_ANSWER = re.compile(r"\bA(\d+)\b")


def _heavy_words() -> frozenset[str]:
    words: set[str] = set()
    for phrase in (*PLACES, *PLACE_FACTS, *DEVICES, *DEVICE_FACTS):
        words.update(phrase.split())
    return frozenset(words)


class KeywordEmbedder:
    """A weighted bag of words (``semcache.Embedder``): entity/attribute words weigh 3."""

    def __init__(self, dim: int = 512, heavy: float = 3.0) -> None:
        self._dim = dim
        self._heavy = heavy
        self._heavy_words = _heavy_words()

    @property
    def name(self) -> str:
        return f"keyword-bow-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in _TOKEN.findall(text.lower()):
                digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
                slot = int.from_bytes(digest[:4], "little") % self._dim
                sign = 1.0 if digest[4] & 1 else -1.0
                weight = self._heavy if token in self._heavy_words else 1.0
                out[row, slot] += sign * weight
            norm = float(np.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
        return out


@dataclass(frozen=True, slots=True)
class Query:
    """One request of the stream: its text and the intent (index) it asks for."""

    text: str
    intent: int
    phase: str


class Traffic:
    """Intents, their answers, and query streams; ``intent_of`` labels any generated text."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.intents: list[tuple[str, str]] = [(a, e) for e in PLACES for a in PLACE_FACTS]
        self.first_device = len(self.intents)
        self.intents += [(a, e) for e in DEVICES for a in DEVICE_FACTS]
        self._intent_of: dict[str, int] = {}

    def answer(self, intent: int) -> str:
        return f"A{intent} B{intent} C{intent}"

    def answer_for(self, params: Mapping[str, Any]) -> str:
        """The upstream: the right answer for the query's intent (``FakeUpstream`` script)."""
        return self.answer(self._intent_of[params["messages"][-1]["content"]])

    def intent_of(self, text: str) -> int:
        return self._intent_of[text]

    @staticmethod
    def served_intent(answer: str) -> int:
        found = _ANSWER.search(answer)
        if found is None:
            raise ValueError(f"not an answer of this simulation: {answer!r}")
        return int(found.group(1))

    def _phrase(self, intent: int, templates: Sequence[str]) -> str:
        attr, entity = self.intents[intent]
        text = self.rng.choice(templates).format(a=attr, e=entity)
        if self.rng.random() < 0.5:
            text = self.rng.choice(("hi ", "hello ", "ok ", "quick question ", "so ")) + text
        if self.rng.random() < 0.5:
            text += self.rng.choice((" please", " thanks", " now", " today", " quickly"))
        self._intent_of[text] = intent
        return text

    def stream(self, n: int, *, devices: float, chatty: float, phase: str) -> Iterator[Query]:
        """``n`` queries: a share ``devices`` about the new topic, ``chatty`` in the new
        phrasing; intents drawn with Zipf-like popularity (repeats and paraphrases occur)."""
        places = list(range(self.first_device))
        gadgets = list(range(self.first_device, len(self.intents)))
        for pool in (places, gadgets):
            random.Random(len(pool)).shuffle(pool)  # a fixed popularity order per pool
        for _ in range(n):
            pool = gadgets if self.rng.random() < devices else places
            rank = min(int(self.rng.paretovariate(1.1)) - 1, len(pool) - 1)
            intent = pool[rank if self.rng.random() < 0.5 else self.rng.randrange(len(pool))]
            templates = CHATTY if self.rng.random() < chatty else PLAIN
            yield Query(self._phrase(intent, templates), intent, phase)


@dataclass(frozen=True, slots=True)
class Window:
    """One window of replayed traffic: what was served and what the live estimate said.

    ``wrong``: semantic hits whose answer belonged to another intent (the truth, known from
    the labels); ``true_rate`` = wrong / semantic hits; ``estimate``: the weighted estimate
    from the shadow verdicts of this window's hits (:func:`weighted_rate`).
    """

    phase: str
    threshold: float
    requests: int
    hits: int
    semantic_hits: int
    wrong: int
    estimate: Estimate

    @property
    def hit_rate(self) -> float:
        return self.hits / self.requests if self.requests else 0.0

    @property
    def true_rate(self) -> float:
        return self.wrong / self.semantic_hits if self.semantic_hits else 0.0

    @property
    def covered(self) -> bool:
        return self.estimate.low <= self.true_rate <= self.estimate.high


def replay(
    cache: Any, traffic: Traffic, queries: Sequence[Query], *, window: int, model: str
) -> list[Window]:
    """Send ``queries`` through ``cache`` (a ``SemanticCache`` whose upstream answers with
    ``traffic.answer_for``); one :class:`Window` per ``window`` queries."""
    from semcache.stats import Tier, cache_info

    out: list[Window] = []
    for start in range(0, len(queries), window):
        chunk = queries[start : start + window]
        seen = len(cache.labeled_pairs())
        hits = semantic = wrong = 0
        for query in chunk:
            response = cache.completion(
                model=model, messages=[{"role": "user", "content": query.text}]
            )
            info = cache_info(response)
            if info is None or not info.hit:
                continue
            hits += 1
            if info.tier is Tier.SEMANTIC:
                semantic += 1
                served = traffic.served_intent(response.choices[0].message.content)
                wrong += served != query.intent
        cache.drain_tuning()
        cache.flush()
        shadow = [p for p in cache.labeled_pairs()[seen:] if p.sample_probability is not None]
        verdicts = [(p.label == 0, float(p.sample_probability)) for p in shadow]
        delta = cache.stats().tuning.delta
        out.append(
            Window(
                phase=chunk[0].phase,
                threshold=cache.threshold(),
                requests=len(chunk),
                hits=hits,
                semantic_hits=semantic,
                wrong=wrong,
                estimate=weighted_rate(verdicts, delta),
            )
        )
    return out


def label_rows(traffic: Traffic, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The oracle's labels for exported miss rows: 1 when both texts ask the same intent."""
    labeled = []
    for row in rows:
        same = traffic.intent_of(row["text_a"]) == traffic.intent_of(row["text_b"])
        labeled.append({**row, "label": int(same)})
    return labeled
