"""The ``semcache`` command line behaves (issue 11 item 5, issue 17): one-line errors with exit
status 2 for bad options and bad SEMCACHE_* values, one warning line per unknown variable,
help on every option, ``python -m semcache``."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from semcache import cli

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    for name in list(os.environ):
        if name.upper().startswith("SEMCACHE_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def _exit_status(argv: list[str]) -> int:
    try:
        return cli.main(argv)
    except SystemExit as exc:  # argparse exits for usage errors
        return int(exc.code)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["demo", "--threshold", "2"], "argument --threshold: '2': expected a cosine"),
        (["demo", "--threshold", "-1.5"], "argument --threshold: '-1.5'"),
        (["demo", "--threshold", "nan"], "argument --threshold: 'nan'"),
        (["demo", "--threshold", "high"], "argument --threshold: 'high'"),
        (["demo", "--delay", "-1"], "argument --delay: '-1'"),
        (["demo", "--verifier", "strict"], "argument --verifier: invalid choice: 'strict'"),
        (["demo", "--bogus"], "unrecognized arguments: --bogus"),
        (["serve"], "the following arguments are required: --config"),
        (["serve", "--config", "x.toml", "--port", "http"], "argument --port"),
    ],
)
def test_bad_option_is_one_line_naming_it_and_exit_2(capsys, argv, needle):
    assert _exit_status(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"semcache {argv[0]}: error: ") and needle in lines[0]
    assert captured.out == ""


def test_threshold_bounds_come_from_the_setting():
    assert cli.cosine_threshold("-1") == -1.0 and cli.cosine_threshold("1") == 1.0
    assert cli.cosine_threshold("0.93") == 0.93
    with pytest.raises(argparse.ArgumentTypeError, match=r"\[-1, 1\]"):
        cli.cosine_threshold("1.0001")


@pytest.mark.parametrize("command", ["demo", "eval", "calibrate"])
def test_bad_environment_value_stops_every_command_before_it_runs(monkeypatch, capsys, command):
    monkeypatch.setenv("SEMCACHE_SEMANTIC__THRESHOLD", "1.5")
    assert cli.main([command]) == 2
    assert capsys.readouterr().err == (
        f"semcache {command}: environment variable `SEMCACHE_SEMANTIC__THRESHOLD`='1.5': "
        "expected a number <= 1\n"
    )


def test_bad_dotenv_value_is_named_with_its_file(tmp_path, capsys):
    (tmp_path / ".env").write_text("SEMCACHE_STORE__BACKEND=valkey\n")
    assert cli.main(["demo"]) == 2
    assert capsys.readouterr().err == (
        "semcache demo: key `SEMCACHE_STORE__BACKEND`='valkey' in .env file '.env': "
        "expected 'edge', 'qdrant', 'redis' or 'none'\n"
    )


def test_unknown_variable_is_one_warning_line(monkeypatch, capsys):
    monkeypatch.setenv("SEMCACHE_SEMANTIC__THRESHOLDD", "0.5")
    assert _exit_status(["demo", "--threshold", "2"]) == 2  # stops before running the demo
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (
        "semcache: warning: unknown environment variable `SEMCACHE_SEMANTIC__THRESHOLDD`; "
        "did you mean `SEMCACHE_SEMANTIC__THRESHOLD`?"
    )
    assert len(err) == 2 and "--threshold" in err[1]


def test_unknown_variable_under_strict_is_an_error(monkeypatch, capsys):
    monkeypatch.setenv("SEMCACHE_SEMANTIC__THRESHOLDD", "0.5")
    monkeypatch.setenv("SEMCACHE_STRICT", "1")
    assert cli.main(["demo"]) == 2
    assert capsys.readouterr().err == (
        "semcache demo: unknown environment variable `SEMCACHE_SEMANTIC__THRESHOLDD`; "
        "did you mean `SEMCACHE_SEMANTIC__THRESHOLD`?\n"
    )


def test_help_ignores_the_environment(monkeypatch, capsys):
    monkeypatch.setenv("SEMCACHE_SEMANTIC__THRESHOLD", "1.5")
    assert _exit_status(["demo", "--help"]) == 0
    assert "--threshold" in capsys.readouterr().out


def test_serve_reports_bad_environment_values_one_line_each(tmp_path, monkeypatch, capsys):
    from semcache.server.cli import serve_main

    config = tmp_path / "proxy.toml"
    config.write_text(
        '[[model_list]]\nmodel_name = "m"\nlitellm_params.model = "openai/m"\n'
        '[[clients]]\nkey = "k"\ntenant = "t"\n[cache.semantic]\ntreshold = 0.9\n'
    )
    monkeypatch.setenv("SEMCACHE_STORE__BACKEND", "valkey")
    assert serve_main(["--config", str(config)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "semcache serve: invalid proxy config: unknown setting `cache.semantic.treshold`; "
        "did you mean `cache.semantic.threshold`?",
        "semcache serve: invalid proxy config: environment variable `SEMCACHE_STORE__BACKEND`="
        "'valkey': expected 'edge', 'qdrant', 'redis' or 'none'",
    ]


def _parsers() -> dict[str, argparse.ArgumentParser]:
    from semcache.cli.demo import _parser as demo_parser
    from semcache.server.cli import _parser as serve_parser

    return {"demo": demo_parser(), "serve": serve_parser()}


@pytest.mark.parametrize("command", ["demo", "serve"])
def test_every_option_has_help(command):
    parser = _parsers()[command]
    options = [action for action in parser._actions if action.option_strings]
    assert len(options) >= 3
    for action in options:
        assert action.help, f"semcache {command} {action.option_strings[0]} has no help"


def test_python_dash_m_semcache():
    env = {**os.environ, "SEMCACHE_SEMANTIC__THRESHOLD": "2"}
    version = subprocess.run(
        [sys.executable, "-m", "semcache", "--version"], capture_output=True, text=True, env=env
    )
    assert (version.returncode, version.stdout.strip()) == (0, "semcache 0.1.0")
    bad = subprocess.run(
        [sys.executable, "-m", "semcache", "demo"], capture_output=True, text=True, env=env
    )
    assert bad.returncode == 2
    assert bad.stderr == (
        "semcache demo: environment variable `SEMCACHE_SEMANTIC__THRESHOLD`='2': "
        "expected a number <= 1\n"
    )


def test_purge_of_a_store_held_by_another_process_fails_loudly(monkeypatch, tmp_path, capsys):
    """A purge that cannot reach the store must not report success: exit 1, one line naming
    the store, never "purged 0"."""
    from semcache.embedders import registry
    from semcache.stores._dirlock import DirectoryLock
    from semcache.testing import FakeEmbedder

    store = tmp_path / "store"
    store.mkdir()
    monkeypatch.setitem(registry._NAMED, "minilm", lambda *args: FakeEmbedder())
    monkeypatch.setenv("SEMCACHE_STORE__PATH", str(store))
    held = DirectoryLock(store)
    held.acquire()  # as a running proxy holds it
    try:
        status = _exit_status(["purge", "--all"])
    finally:
        held.release()
    captured = capsys.readouterr()
    assert status == 1
    assert "nothing purged from the store" in captured.err and str(store) in captured.err
    assert "purged 0" not in captured.out
    assert _exit_status(["purge", "--all"]) == 0  # once released, the same purge works
    assert "semcache purge: purged 0 answer(s)" in capsys.readouterr().out
