"""Helpers the process-level benchmarks share: a free loopback port, and waiting for
``semcache serve`` processes to answer ``/readyz``."""

from __future__ import annotations

import socket
import subprocess
import time

import httpx


def free_port() -> int:
    """A loopback port nothing listens on now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_ready(ports: list[int], processes: list[subprocess.Popen[bytes]]) -> None:
    """Until every process answers ``/readyz`` with 200 (10 minutes at most); a process that
    exits first is an error."""
    deadline = time.monotonic() + 600
    for port, process in zip(ports, processes, strict=True):
        while True:
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError(f"semcache serve on port {port} did not become ready")
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5)
                if r.status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.5)
