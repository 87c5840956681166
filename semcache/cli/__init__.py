"""``semcache`` command line: one argparse parser, one subcommand a module.

Each command's module exposes ``add_arguments(parser)`` and ``run(args) -> int`` and is
imported only when chosen. Every failure a user can cause (a bad option, a bad ``SEMCACHE_*``
value, an unknown setting, a :class:`UsageError`) is one stderr line prefixed by the command,
exit 2; Ctrl-C is exit 130 with no traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from importlib import import_module
from typing import Any, NoReturn, Protocol, TextIO

from semcache.errors import ConfigError, SettingsError, UnknownSettingWarning

#: subcommand -> (module with ``add_arguments`` and ``run``, one-line help).
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("semcache.cli.demo", "replay a realistic request stream through the cache"),
    "eval": ("semcache.eval.cli", "false-hit rate / recall across thresholds"),
    "calibrate": ("semcache.eval.calibrate_cli", "choose a threshold for a false-hit target"),
    "finetune": (
        "semcache.eval.finetune_cli",
        "fine-tune the local embedder on labeled pairs",
    ),
    "serve": ("semcache.server.cli", "run the OpenAI-compatible caching proxy"),
    "purge": ("semcache.cli.purge", "withdraw stored answers (--tenant/--namespace/--model)"),
    "misses": (
        "semcache.tuning.misses_cli",
        "a running proxy's frequent near misses, exported for labeling",
    ),
    "compress-eval": ("semcache.compress.ab_cli", "A/B-test prompt compression"),
    "import": ("semcache.cli.importer", "bulk-load question/answer pairs from a JSONL file"),
}


class Command(Protocol):
    """What a command's module provides (its module object satisfies this)."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


class UsageError(Exception):
    """Raised by a command's ``run`` for a bad combination of options or an unusable
    argument: ``semcache COMMAND: error: <message>``, exit status 2."""


#: Commands that read the cache settings themselves, with more context than the shell has
#: (``serve`` layers its config file over the environment and knows which variables the
#: file references), so the up-front environment check is theirs to do.
_CHECK_OWN_SETTINGS = frozenset({"serve"})


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line naming the option (not usage + error)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def adopt(parser: argparse.ArgumentParser, source: argparse.ArgumentParser) -> None:
    """Give ``parser`` the options, groups and description of ``source``, a whole parser a
    command's module builds for itself: what argparse's ``parents=`` does, after the fact."""
    parser.description = source.description
    for container in (parser, *parser._action_groups):
        container.conflict_handler = "resolve"  # both have -h/--help: one stays
    parser._add_container_actions(source)


def standalone(
    parser: argparse.ArgumentParser,
    run: Callable[[argparse.Namespace], int],
    argv: Sequence[str],
) -> int:
    """A command run on its own parser (the modules' ``*_main(argv)``, kept for callers
    that run one command without ``semcache``): parse, run, a UsageError as ``error``."""
    args = parser.parse_args(list(argv))
    try:
        return run(args)
    except UsageError as exc:
        parser.error(str(exc))


def cosine_threshold(text: str) -> float:
    """An argparse type: a threshold the settings accept (``semantic.threshold``'s bounds)."""
    from semcache.config.settings import SemanticSettings

    metadata = SemanticSettings.model_fields["threshold"].metadata
    low = next(float(item.ge) for item in metadata if hasattr(item, "ge"))
    high = next(float(item.le) for item in metadata if hasattr(item, "le"))
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not low <= value <= high:  # also refuses nan
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected a cosine similarity in [{low:g}, {high:g}]"
        )
    return value


def build_parser(command: str | None = None) -> OneLineParser:
    """``semcache`` with every subcommand listed; only ``command``'s module is imported and
    gives its subparser options (argparse needs them only for the command being run)."""
    from semcache import __version__

    parser = OneLineParser(
        prog="semcache",
        description="A semantic cache in front of LLM calls.",
        epilog="Run 'semcache COMMAND --help' for a command's options.",
    )
    parser.add_argument("-V", "--version", action="version", version=f"semcache {__version__}")
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", title="commands", required=True
    )
    for name, (module, help_) in COMMANDS.items():
        sub = commands.add_parser(name, help=help_, description=help_)
        if name == command:
            chosen: Command = import_module(module)
            chosen.add_arguments(sub)
            sub.set_defaults(_semcache_run=chosen.run, _semcache_parser=sub)
    return parser


def report_config_error(prefix: str, exc: ConfigError, stream: TextIO) -> None:
    """Write ``exc`` as one line per problem: ``prefix: <problem>``.

    A message shaped as a header and indented details ("invalid proxy config:\n  a\n  b")
    becomes one line per detail, each with the header.
    """
    if isinstance(exc, SettingsError) and exc.problems:
        lines = [problem.line() for problem in exc.problems]
    else:
        lines = str(exc).splitlines() or [type(exc).__name__]
        if len(lines) > 1 and lines[0].endswith(":"):
            lines = [f"{lines[0]} {detail.strip()}" for detail in lines[1:]]
    for line in lines:
        stream.write(f"{prefix}: {line}\n")


@contextmanager
def _one_line_setting_warnings(stream: TextIO) -> Iterator[None]:
    """Show each :class:`UnknownSettingWarning` once, as one line (no file and source line)."""
    shown: set[str] = set()
    with warnings.catch_warnings():
        warnings.simplefilter("always", UnknownSettingWarning)
        fallback = warnings.showwarning

        def show(message: Any, category: type[Warning], *args: Any, **kwargs: Any) -> None:
            if not issubclass(category, UnknownSettingWarning):
                fallback(message, category, *args, **kwargs)
            elif str(message) not in shown:
                shown.add(str(message))
                stream.write(f"semcache: warning: {message}\n")

        warnings.showwarning = show
        yield


def check_settings() -> None:
    """Read the cache settings from the environment and ``.env`` once, so a bad value stops
    the command before it starts; raises :class:`SettingsError`, warns on unknown names."""
    from semcache.config.settings import CacheSettings

    CacheSettings()


def _quiet_interrupts(unraisable: Any) -> None:
    """A Ctrl-C that lands where Python cannot raise it (a finalizer, a callback, pydantic
    compiling a schema) is printed as "Exception ignored ... Traceback"; the command's own
    handler already says "interrupted", so such a one is dropped. Anything else as usual."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        return
    sys.__unraisablehook__(unraisable)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``semcache ARGV``; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    name = args[0] if args and args[0] in COMMANDS else None
    # LiteLLM fetches its price map over the network at import unless told not to; the
    # bundled map keeps the command reproducible and offline-safe. Callers can override.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    asks_help = any(option in ("-h", "--help") for option in args[1:])
    prefix = "semcache" if name is None else f"semcache {name}"
    sys.unraisablehook = _quiet_interrupts
    with _one_line_setting_warnings(sys.stderr):
        try:
            if name is not None and name not in _CHECK_OWN_SETTINGS and not asks_help:
                check_settings()
            parsed, extra = build_parser(name).parse_known_args(args)
            if extra:  # the command's own parser names them (argparse's top level would)
                parsed._semcache_parser.error(f"unrecognized arguments: {' '.join(extra)}")
            status: int = parsed._semcache_run(parsed)
            return status
        except SystemExit as exc:  # argparse: --help, --version (0), a usage error (2)
            return exc.code if isinstance(exc.code, int) else 2
        except UsageError as exc:
            print(f"{prefix}: error: {exc} (see '{prefix} --help')", file=sys.stderr)
            return 2
        except ConfigError as exc:
            report_config_error(prefix, exc, sys.stderr)
            return 2
        except KeyboardInterrupt:
            # Ctrl-C: the shell's convention (128 + SIGINT), one line, no traceback
            print(f"{prefix}: interrupted", file=sys.stderr)
            return 130


def run() -> None:
    """The console-script entry point: :func:`main`, and a Ctrl-C that lands outside it
    (while the interpreter imports or exits) is still exit status 130 without a traceback."""
    try:
        status = main()
    except KeyboardInterrupt:
        status = 130
    raise SystemExit(status)


if __name__ == "__main__":
    run()
