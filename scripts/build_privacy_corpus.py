"""Write semcache/data/privacy_prompts.jsonl: the labeled private-data corpus (synthetic values).

Three splits, each from its own batch of hand-written templates (``privacy_templates``) and its
own seed: ``dev`` (the rules were developed against it), ``heldout`` (written separately; its
first measurement led to three rule fixes, listed in ``privacy_templates``) and ``fresh`` (a
third batch written after those fixes, measured once, never tuned on). Positive templates are
filled twice with fresh generated values; negative templates (plain questions and look-alike
hard cases) once. Every private value's span is
recorded. All values come from ``privacy_values``: generated card numbers, IBANs and national
IDs with valid checksums, random public IPs, random keys; no real person's data.

Usage: ``python scripts/build_privacy_corpus.py [--out PATH]`` (deterministic: same output on
every run with the same package versions).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import privacy_templates as templates
import privacy_values as values

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "semcache" / "data" / "privacy_prompts.jsonl"
SEEDS = {"dev": 1201, "heldout": 2402, "fresh": 3603}
POSITIVE_FILLS = 2

SLOT_KIND = {
    "email": "email",
    **{
        name: "phone"
        for name in ("phone", "phone_cn_mobile", "phone_cn_landline", "phone_us", "phone_intl")
    },
    "card": "card",
    "iban": "iban",
    **{
        name: "national_id"
        for name in (
            "national_id",
            "cn_ric",
            "us_ssn",
            "br_cpf",
            "es_dni",
            "in_aadhaar",
            "kr_rrn",
            "it_codicefiscale",
        )
    },
    **{name: "ip" for name in ("ip", "ipv4", "ipv6")},
    **{name: "secret" for name in ("api_key", "jwt", "pem_key", "password", "token")},
}
_SLOT = re.compile(r"(?<!\{)\{(\w+)\}(?!\})")
"""A slot: ``{name}``; ``{{`` and ``}}`` are literal braces."""


def fill(template: str, rng: random.Random) -> tuple[str, list[list]]:
    """The template with every slot generated, and the spans of the private ones."""
    text = ""
    spans: list[list] = []
    position = 0
    for match in _SLOT.finditer(template):
        name = match.group(1)
        if name not in values.GENERATORS:
            raise SystemExit(f"unknown slot {{{name}}} in template {template!r}")
        text += _literal(template[position : match.start()])
        value = values.GENERATORS[name](rng)
        if name in SLOT_KIND:
            spans.append([len(text), len(text) + len(value), SLOT_KIND[name]])
        text += value
        position = match.end()
    return text + _literal(template[position:]), spans


def _literal(segment: str) -> str:
    return segment.replace("{{", "{").replace("}}", "}")


def build_split(split: str, positives, negatives) -> list[dict]:
    rng = random.Random(SEEDS[split])
    rows: list[dict] = []
    batches = [(positives, POSITIVE_FILLS), (negatives, 1)]
    for batch, fills in batches:
        for lang, kinds, hard, template in batch:
            for _ in range(fills):
                text, spans = fill(template, rng)
                found = sorted({kind for _, _, kind in spans})
                if found != sorted(kinds):
                    raise SystemExit(f"template labels {kinds} but slots give {found}: {template}")
                rows.append(
                    {
                        "split": split,
                        "lang": lang,
                        "text": text,
                        "kinds": found,
                        "spans": spans,
                        "hard": hard,
                    }
                )
    for index, row in enumerate(rows, 1):
        label = "-".join(row["kinds"]) or "none"
        row["id"] = f"{split}-{row['lang']}-{label}-{index:03d}"
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    rows = (
        build_split(
            "dev",
            templates.DEV_POSITIVE + templates.DEV_MULTI,
            templates.DEV_NEGATIVE_PLAIN + templates.DEV_NEGATIVE_HARD,
        )
        + build_split(
            "heldout",
            templates.HELDOUT_POSITIVE + templates.HELDOUT_MULTI,
            templates.HELDOUT_NEGATIVE_PLAIN + templates.HELDOUT_NEGATIVE_HARD,
        )
        + build_split("fresh", templates.FRESH_POSITIVE, templates.FRESH_NEGATIVE)
    )
    keys = ("id", "split", "lang", "text", "kinds", "spans", "hard")
    with args.out.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps({key: row[key] for key in keys}, ensure_ascii=False) + "\n")
    positives = sum(bool(row["kinds"]) for row in rows)
    print(f"wrote {len(rows)} prompts ({positives} with private data) to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
