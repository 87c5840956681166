"""``semcache`` command line: one entry point, each subcommand owned by its module."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from importlib import import_module

#: subcommand -> ("module:function", one-line help). Modules load only when chosen.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("semcache.demo:demo_main", "replay a realistic request stream through the cache"),
    "eval": ("semcache.eval.cli:eval_main", "false-hit rate / recall across thresholds"),
    "calibrate": ("semcache.eval.cli:calibrate_main", "choose a threshold for a false-hit target"),
    "serve": ("semcache.server.cli:serve_main", "run the OpenAI-compatible caching proxy"),
    "compress-eval": ("semcache.compress.ab_cli:compress_eval_main", "A/B-test prompt compression"),
}


def _usage() -> str:
    lines = ["usage: semcache COMMAND [options]", "", "commands:"]
    lines += [f"  {name:<10} {help_}" for name, (_, help_) in COMMANDS.items()]
    lines += ["", "Run 'semcache COMMAND --help' for a command's options."]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(_usage())
        return 0 if args else 2
    if args[0] in ("-V", "--version"):
        from semcache import __version__

        print(f"semcache {__version__}")
        return 0
    command = COMMANDS.get(args[0])
    if command is None:
        print(f"semcache: unknown command {args[0]!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    # LiteLLM fetches its price map over the network at import unless told not to; the
    # bundled map keeps the command reproducible and offline-safe. Callers can override.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    module, function = command[0].split(":")
    entry: Callable[[list[str]], int] = getattr(import_module(module), function)
    return entry(args[1:])


if __name__ == "__main__":
    raise SystemExit(main())
