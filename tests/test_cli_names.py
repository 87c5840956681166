"""Every ``SEMCACHE_*`` name the README, docs/ or the code mention is known to the
unknown-variable check (issue 24 item 9: ``SEMCACHE_ADMIN_KEY`` was warned about), and the
``semcache`` logger has a NullHandler."""

from __future__ import annotations

import re
from pathlib import Path

from semcache.config.check import unknown_settings_variables
from semcache.config.settings import OTHER_VARIABLES, CacheSettings

ROOT = Path(__file__).parents[1]
#: names written wrong on purpose, to show the warning
DELIBERATE_TYPOS = {"SEMCACHE_SEMANTIC__THRESHOLDD"}
NAME = re.compile(r"(?<![A-Za-z0-9_])SEMCACHE_[A-Z0-9_]*[A-Z0-9]")  # not _SEMCACHE_* (internal)


def _documented_names() -> set[str]:
    files = [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    for folder in ("semcache", "eval", "guard", "stores", "embedders", "benchmarks"):
        files += (ROOT / folder).rglob("*.py")
    names: set[str] = set()
    for file in files:
        names |= set(NAME.findall(file.read_text(encoding="utf-8")))
    return names - DELIBERATE_TYPOS


def test_every_documented_variable_is_known() -> None:
    names = _documented_names()
    assert "SEMCACHE_ADMIN_KEY" in names and "SEMCACHE_SEMANTIC__THRESHOLD" in names
    unknown = unknown_settings_variables(
        CacheSettings, dict.fromkeys(names, "x"), {}, other=OTHER_VARIABLES
    )
    assert [problem.line() for problem in unknown] == []


def test_the_check_still_reports_a_misspelt_name() -> None:
    unknown = unknown_settings_variables(
        CacheSettings, {"SEMCACHE_ADMIN_KEYS": "x"}, {}, other=OTHER_VARIABLES
    )
    assert len(unknown) == 1


def test_the_semcache_logger_has_a_null_handler() -> None:
    """In a fresh interpreter: other tests (and uvicorn's log config) reset handlers."""
    import subprocess
    import sys

    code = (
        "import logging, semcache; "
        "assert any(isinstance(h, logging.NullHandler) "
        "for h in logging.getLogger('semcache').handlers)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_calibrate_says_how_many_pairs_a_tiny_file_needs(tmp_path, capsys) -> None:
    from semcache.cli import main

    pairs = tmp_path / "two.jsonl"
    pairs.write_text(
        '{"text_a": "a", "text_b": "b", "label": 1}\n{"text_a": "c", "text_b": "d", "label": 0}\n'
    )
    assert main(["calibrate", "--data", str(pairs), "--target", "0.05"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("semcache calibrate: error: 2 labeled pairs") and "too few" in err
    assert "at least 74 pairs labeled 1" in err and "Traceback" not in err


def test_a_bad_option_is_one_line(capsys) -> None:
    from semcache.cli import main

    for command in ("calibrate", "eval"):
        assert main([command, "--foo"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"semcache {command}: error:")
