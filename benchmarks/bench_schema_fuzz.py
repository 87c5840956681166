"""schemathesis over every route of the proxy's OpenAPI document, with many examples.

The test suite runs ``tests/server/test_server_schema.py`` with 2 examples per operation,
without the chat route and without schemathesis's coverage phase; this runs the same test
with ``--examples`` (default 200), the chat route and the coverage phase, every response
check schemathesis has (the test's ``CHECKS``: no 5xx, status, content type, headers and
body as documented, invalid data refused, valid data accepted, a missing or wrong key
refused), and prints the responses by status, the failed operations (0 is the target) and
the load average (the machine is shared: wall time is noisy). Baseline: the same run with 2
examples, measured first.

    python benchmarks/bench_schema_fuzz.py --examples 200
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def run(examples: int) -> tuple[float, str]:
    env = {
        **os.environ,
        "SCHEMA_FUZZ_EXAMPLES": str(examples),
        "SCHEMA_FUZZ_CHAT": "1",
        "HF_HUB_OFFLINE": "1",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-s",
            "-p",
            "no:cacheprovider",
            "tests/server/test_server_schema.py",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [
        line
        for line in done.stdout.splitlines()
        if "by status" in line or "passed" in line or line.startswith(("FAILED", "  | - "))
    ]
    return time.perf_counter() - started, " | ".join(lines) or done.stdout[-2000:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=200)
    args = parser.parse_args()
    base_s, base = run(2)
    big_s, big = run(args.examples)
    print(f"load average: {os.getloadavg()} (shared machine: times are noisy)")
    print(f"baseline, 2 examples/op: {base_s:.1f} s  {base}")
    print(f"{args.examples} examples/op: {big_s:.1f} s ({big_s / base_s:.2f}x)  {big}")


if __name__ == "__main__":
    main()
