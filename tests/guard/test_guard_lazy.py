"""Importing semcache, importing semcache.guard and building guards compile no pattern and read
no lexicon; a DetailGuard's first comparison does both, once. Run in a fresh interpreter,
because this test session has long since loaded the guard."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = r"""
import json, re, sys

ENGINE = ("semcache.guard.rules", "semcache.guard.features", "semcache.guard.patterns",
          "semcache.guard.order", "semcache.guard.lexicon")
compiled_by = []
real_compile = re.compile

def spy(*args, **kwargs):
    compiled_by.append(sys._getframe(1).f_globals.get("__name__", "?"))
    return real_compile(*args, **kwargs)

re.compile = spy

def state():
    lexicon = sys.modules.get("semcache.guard.lexicon")
    return {
        "compiled": sorted({name for name in compiled_by if name.startswith("semcache.guard")}),
        "engine": [name for name in ENGINE if name in sys.modules],
        "lexicon_reads": lexicon.load.cache_info().misses if lexicon else 0,
    }

import semcache
import semcache.guard
from semcache.guard import registered_names

guards = [semcache.get_verifier(name) for name in registered_names()]
guards.append(semcache.DetailGuard(rules=["number"]))
same = [guard.verify("2 steps", "2 steps") for guard in guards]
before = state()
verdict = semcache.DetailGuard().verify("Reset it in 2 steps", "Reset it in 3 steps")
again = semcache.get_verifier("details").verify("in May", "in June")
print(json.dumps({"before": before, "after": state(), "verdicts": [verdict, again, *same]}))
"""


def run_probe() -> dict:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    return json.loads(out.stdout)


def test_imports_and_construction_compile_nothing_and_the_first_comparison_builds_once() -> None:
    result = run_probe()
    assert result["before"] == {"compiled": [], "engine": [], "lexicon_reads": 0}
    after = result["after"]
    # the spy does see the guard's patterns being compiled, so "compiled: []" above means it
    assert "semcache.guard.patterns" in after["compiled"]
    assert after["engine"] == [
        "semcache.guard.rules",
        "semcache.guard.features",
        "semcache.guard.patterns",
        "semcache.guard.order",
        "semcache.guard.lexicon",
    ]
    assert after["lexicon_reads"] == 1  # two guards, two comparisons, one read
    assert result["verdicts"] == [False, False, True, True, True, True]
