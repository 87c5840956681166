"""The test suite, run several times in a row beside CPU-bound processes.

    python benchmarks/bench_suite_under_load.py [--runs 3] [--hogs 2] [--pytest-args "-q"]

Starts ``--hogs`` processes that spin on the CPU for the whole benchmark, then runs
``python -m pytest`` ``--runs`` times one after another (stopping at the first failure).
Samples the 1-minute load average every 10 s during each run. Prints, per run, the exit
status, the wall time, the pytest summary line and the lowest, median and highest load
average seen (``--json`` also keeps a failed run's output); with ``--baseline``, one run
without the hogs first and each run's time against it. Asserts nothing: its figures go to
the notes.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SPIN = "while True:\n    pass\n"


def sample_load(stop: threading.Event, into: list[float]) -> None:
    while not stop.wait(10.0):
        into.append(os.getloadavg()[0])


def run_suite(pytest_args: list[str]) -> dict[str, Any]:
    loads: list[float] = []
    stop = threading.Event()
    sampler = threading.Thread(target=sample_load, args=(stop, loads), daemon=True)
    sampler.start()
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *pytest_args],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    wall = time.monotonic() - started
    stop.set()
    sampler.join()
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    failures = [line for line in lines if line.startswith(("FAILED", "ERROR"))]
    return {
        "rc": proc.returncode,
        "wall_s": round(wall, 1),
        "summary": lines[-1] if lines else proc.stderr[-500:],
        "failures": failures,
        "load_min": round(min(loads), 2) if loads else None,
        "load_median": round(statistics.median(loads), 2) if loads else None,
        "load_max": round(max(loads), 2) if loads else None,
        "output_tail": proc.stdout[-30000:] if proc.returncode else "",
    }


def _short(run: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in run.items() if k != "output_tail"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--hogs", type=int, default=2)
    parser.add_argument("--pytest-args", default="-q")
    parser.add_argument("--baseline", action="store_true", help="one run without hogs first")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    # started in the background by a shell without job control, this process ignores SIGINT
    # and so would every test's child: the suite's Ctrl-C tests need the default
    signal.signal(signal.SIGINT, signal.default_int_handler)
    pytest_args = shlex.split(args.pytest_args)
    report: dict[str, Any] = {"hogs": args.hogs, "runs": []}
    if args.baseline:
        report["baseline"] = run_suite(pytest_args)
        print("baseline", json.dumps(report["baseline"]), flush=True)
    hogs = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(args.hogs)]
    try:
        for i in range(args.runs):
            result = run_suite(pytest_args)
            report["runs"].append(result)
            shown = {k: v for k, v in result.items() if k != "output_tail"}
            print(f"run {i + 1}", json.dumps(shown), flush=True)
            if result["rc"] != 0:
                break
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    passed = sum(1 for r in report["runs"] if r["rc"] == 0)
    report["passed_in_a_row"] = passed
    if args.baseline and report["runs"]:
        base = report["baseline"]["wall_s"]
        report["wall_over_baseline"] = [round(r["wall_s"] / base, 2) for r in report["runs"]]
    print(json.dumps({**report, "runs": [_short(r) for r in report["runs"]]}, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
