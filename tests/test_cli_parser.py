"""One ``semcache`` parser: every command listed, each module's ``add_arguments`` / ``run``,
one-line errors prefixed by the command (exit 2), Ctrl-C exit 130 from any command."""

from __future__ import annotations

import argparse
from importlib import import_module

import pytest

from semcache import cli


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This module doubles as a command (``semcache boom``) for the tests below."""
    parser.add_argument("--then", choices=("interrupt", "usage"), required=True)


def run(args: argparse.Namespace) -> int:
    if args.then == "interrupt":
        raise KeyboardInterrupt
    raise cli.UsageError("--then usage: refused")


@pytest.fixture
def boom(monkeypatch):
    monkeypatch.setitem(cli.COMMANDS, "boom", (__name__, "a command for tests"))


def test_help_lists_every_command(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for name, (_, help_) in cli.COMMANDS.items():
        assert name in out and help_ in out


@pytest.mark.parametrize("name", sorted(cli.COMMANDS))
def test_each_command_module_plugs_into_the_parser(name, capsys):
    module = import_module(cli.COMMANDS[name][0])
    assert callable(module.add_arguments) and callable(module.run)
    assert cli.main([name, "--help"]) == 0
    assert capsys.readouterr().out.startswith(f"usage: semcache {name} ")


def test_a_usage_error_from_run_is_one_line_with_the_command(capsys):
    assert cli.main(["purge"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "semcache purge: error: give --tenant, --namespace or --model, or --all to purge "
        "everything (see 'semcache purge --help')"
    ]


def test_unknown_commands_and_options_are_one_line(capsys, boom):
    assert cli.main(["bogus"]) == 2
    assert cli.main(["boom", "--then", "usage", "--extra"]) == 2
    assert cli.main(["boom", "--then", "usage"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3
    assert err[0].startswith("semcache: error: argument COMMAND: invalid choice: 'bogus'")
    assert err[1].startswith("semcache boom: error: unrecognized arguments: --extra")
    assert err[2] == "semcache boom: error: --then usage: refused (see 'semcache boom --help')"


def test_ctrl_c_in_any_command_is_exit_130_and_one_line(capsys, boom):
    assert cli.main(["boom", "--then", "interrupt"]) == 130
    assert capsys.readouterr().err == "semcache boom: interrupted\n"
