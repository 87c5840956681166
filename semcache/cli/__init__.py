"""``semcache`` command line: one entry point, each subcommand owned by its module.

Every failure a user can cause is one line on stderr and exit status 2: a bad option
(``semcache demo --threshold 2``), a bad ``SEMCACHE_*`` value or ``.env`` key (checked
before the command runs, naming the variable, the value and what was expected), an unknown
setting. Unknown ``SEMCACHE_*`` variables are one warning line each (an error under
``SEMCACHE_STRICT=1``).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from importlib import import_module
from typing import Any, NoReturn, TextIO

from semcache.errors import ConfigError, SettingsError, UnknownSettingWarning

#: subcommand -> ("module:function", one-line help). Modules load only when chosen.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("semcache.cli.demo:demo_main", "replay a realistic request stream through the cache"),
    "eval": ("semcache.eval.cli:eval_main", "false-hit rate / recall across thresholds"),
    "calibrate": (
        "semcache.eval.calibrate_cli:calibrate_main",
        "choose a threshold for a false-hit target",
    ),
    "serve": ("semcache.server.cli:serve_main", "run the OpenAI-compatible caching proxy"),
    "purge": (
        "semcache.cli.purge:purge_main",
        "withdraw stored answers (--tenant/--namespace/--model)",
    ),
    "misses": (
        "semcache.tuning.misses_cli:misses_main",
        "a running proxy's frequent near misses, exported for labeling",
    ),
    "compress-eval": ("semcache.compress.ab_cli:compress_eval_main", "A/B-test prompt compression"),
    "import": ("semcache.cli.importer:main", "bulk-load question/answer pairs from a JSONL file"),
}

#: Commands that read the cache settings themselves, with more context than the shell has
#: (``serve`` layers its config file over the environment and knows which variables the
#: file references), so the up-front environment check is theirs to do.
_CHECK_OWN_SETTINGS = frozenset({"serve"})


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line naming the option (not usage + error)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


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


def _usage() -> str:
    lines = ["usage: semcache COMMAND [options]", "", "commands:"]
    lines += [f"  {name:<10} {help_}" for name, (_, help_) in COMMANDS.items()]
    lines += ["", "Run 'semcache COMMAND --help' for a command's options."]
    return "\n".join(lines)


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


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(_usage())
        return 0 if args else 2
    if args[0] in ("-V", "--version"):
        from semcache import __version__

        print(f"semcache {__version__}")
        return 0
    name, options = args[0], args[1:]
    command = COMMANDS.get(name)
    if command is None:
        print(f"semcache: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    # LiteLLM fetches its price map over the network at import unless told not to; the
    # bundled map keeps the command reproducible and offline-safe. Callers can override.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    asks_help = any(option in ("-h", "--help") for option in options)
    with _one_line_setting_warnings(sys.stderr):
        try:
            if name not in _CHECK_OWN_SETTINGS and not asks_help:
                check_settings()
            module, function = command[0].split(":")
            entry: Callable[[list[str]], int] = getattr(import_module(module), function)
            return entry(options)
        except ConfigError as exc:
            report_config_error(f"semcache {name}", exc, sys.stderr)
            return 2
        except KeyboardInterrupt:
            # Ctrl-C: the shell's convention (128 + SIGINT), one line, no traceback
            print(f"semcache {name}: interrupted", file=sys.stderr)
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
