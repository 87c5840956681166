"""A local Anthropic Messages server for tests and benchmarks.

It speaks just enough of ``POST /v1/messages`` (with and without SSE) for LiteLLM's real
Anthropic client to talk to it on loopback, and counts what it was asked. Knobs (attributes,
safe to change while it runs): ``delay_s`` before answering, ``chunks`` per streamed text,
``responder`` (request body -> answer text) and ``call_tools`` (answer a request that offers
tools, unless ``tool_choice`` is ``none``, with a ``tool_use`` of its first tool).

It models Anthropic's prompt cache: a request whose blocks carry a ``cache_control`` mark
reports the tokens up to its last mark as ``cache_creation_input_tokens`` the first time that
prefix is seen and ``cache_read_input_tokens`` after, so a test can see what a breakpoint
saved.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from semcache.testing._openai_server import count_tokens

Responder = Callable[[dict[str, Any]], str]


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the last user turn (tool results excluded)."""
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            texts = [
                b.get("text", "")
                for b in _blocks(message.get("content"))
                if b.get("type") == "text"
            ]
            if texts:
                return " ".join(texts)
    return ""


def echo_messages(body: dict[str, Any]) -> str:
    """Default answer: a deterministic function of the model and the last user turn."""
    return f"[{body.get('model')}] answer to: {last_user_text(body)}"


def prompt_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every block of the prompt in order: tools, system, then each message's blocks."""
    blocks: list[dict[str, Any]] = [dict(t) for t in body.get("tools") or []]
    blocks += _blocks(body.get("system"))
    for message in body.get("messages") or []:
        blocks += _blocks(message.get("content"))
    return blocks


class FakeAnthropicServer:
    """Threaded HTTP server on 127.0.0.1; use as a context manager or start()/stop()."""

    def __init__(
        self, *, responder: Responder = echo_messages, delay_s: float = 0.0, chunks: int = 4
    ) -> None:
        self.responder = responder
        self.delay_s = delay_s
        self.chunks = chunks
        self.call_tools = False
        self.calls: Counter[str] = Counter()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._prefixes: set[str] = set()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    def start(self) -> FakeAnthropicServer:
        handler = type("Handler", (_Handler,), {"server_state": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeAnthropicServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def api_base(self) -> str:
        """Base URL to pass to LiteLLM as ``api_base`` for an ``anthropic/`` model."""
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def messages_calls(self) -> int:
        return self.calls["messages"]

    def reset(self) -> None:
        with self._lock:
            self.calls.clear()
            self.requests.clear()
            self.headers.clear()
            self._prefixes.clear()
        self.call_tools = False

    def usage(self, body: dict[str, Any]) -> dict[str, int]:
        """Input usage, split at the last ``cache_control`` mark as Anthropic's cache would."""
        blocks = prompt_blocks(body)
        tokens = [count_tokens(json.dumps(b.get("text", b), sort_keys=True)) for b in blocks]
        marks = [i for i, b in enumerate(blocks) if b.get("cache_control")]
        if not marks:
            return {"input_tokens": sum(tokens)}
        end = marks[-1] + 1
        unmarked = [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks[:end]]
        digest = hashlib.sha256(json.dumps([body.get("model"), unmarked]).encode()).hexdigest()
        with self._lock:
            seen = digest in self._prefixes
            self._prefixes.add(digest)
        cached = "cache_read_input_tokens" if seen else "cache_creation_input_tokens"
        return {"input_tokens": sum(tokens[end:]), cached: sum(tokens[:end])}

    def _record(self, body: dict[str, Any], headers: dict[str, str]) -> None:
        with self._lock:
            self.calls["messages"] += 1
            self.requests.append(body)
            self.headers.append(headers)

    def answer(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        """The content blocks and stop reason for ``body``."""
        tools = body.get("tools") or []
        choice = (body.get("tool_choice") or {}).get("type")
        if self.call_tools and tools and choice != "none":
            call_id = "toolu_" + hashlib.sha1(last_user_text(body).encode()).hexdigest()[:16]
            use = {"type": "tool_use", "id": call_id, "name": tools[0]["name"]}
            return [{**use, "input": {"question": last_user_text(body)}}], "tool_use"
        return [{"type": "text", "text": self.responder(body)}], "end_turn"


class _Handler(BaseHTTPRequestHandler):
    server_state: FakeAnthropicServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        state = self.server_state
        if not self.path.rstrip("/").endswith("/messages"):
            self._json(
                404, {"type": "error", "error": {"type": "not_found_error", "message": "not found"}}
            )
            return
        state._record(body, {k.lower(): v for k, v in self.headers.items()})
        if state.delay_s:
            time.sleep(state.delay_s)
        content, stop = state.answer(body)
        usage = state.usage(body)
        output = sum(count_tokens(json.dumps(b)) for b in content)
        ident = "msg_" + hashlib.sha1(json.dumps(content).encode()).hexdigest()[:20]
        message = {
            "id": ident,
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {**usage, "output_tokens": output},
        }
        if body.get("stream"):
            self._stream(message)
        else:
            self._json(200, message)

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, message: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()

        def event(payload: dict[str, Any]) -> None:
            self.wfile.write(f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n".encode())
            self.wfile.flush()

        usage = message["usage"]
        start_usage = {**usage, "output_tokens": 0}
        event(
            {
                "type": "message_start",
                "message": {**message, "content": [], "stop_reason": None, "usage": start_usage},
            }
        )
        n = max(1, self.server_state.chunks)
        for index, block in enumerate(message["content"]):
            if block["type"] == "text":
                text = block["text"]
                step = max(1, -(-len(text) // n))
                event(
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    }
                )
                for i in range(0, len(text), step):
                    delta = {"type": "text_delta", "text": text[i : i + step]}
                    event({"type": "content_block_delta", "index": index, "delta": delta})
            else:
                event(
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {**block, "input": {}},
                    }
                )
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
                event({"type": "content_block_delta", "index": index, "delta": delta})
            event({"type": "content_block_stop", "index": index})
        delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
        event(
            {
                "type": "message_delta",
                "delta": delta,
                "usage": {"output_tokens": usage and message["usage"]["output_tokens"]},
            }
        )
        event({"type": "message_stop"})
        self.close_connection = True
