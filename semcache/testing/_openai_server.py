"""A local OpenAI-compatible server for tests, the demo and benchmarks.

Just enough of the OpenAI HTTP API (chat with and without SSE, Responses with and without
SSE, embeddings, models) for
LiteLLM's real client on loopback; it counts what it was asked. Knobs are attributes, safe
to change while it runs: ``delay_s``, ``chunk_delay_s``, ``chunks``, ``fail_next``,
``abort_stream_after``, ``responder`` (request body -> answer text) and ``call_tools``
(answer a request offering tools, unless ``tool_choice`` is ``none``, with a call to its
first tool).

It models OpenAI's prompt cache for requests that carry a ``prompt_cache_key``: the longest
run of whole content parts (a string content is one part), from the start of the prompt,
that an earlier request with the same key and model began with is reported as
``usage.prompt_tokens_details.cached_tokens`` when it holds at least ``min_cached_tokens``.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from semcache.testing import _openai_responses as responses_api

Responder = Callable[[dict[str, Any]], str]

_WORD = re.compile(r"\w+", re.UNICODE)


def _last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
            return str(content or "")
    return ""


def echo_responder(body: dict[str, Any]) -> str:
    """Default answer: a deterministic function of the model and the last user message."""
    return f"[{body.get('model')}] answer to: {_last_user_text(body)}"


def count_tokens(text: str) -> int:
    """Crude token count (words), so usage and cost figures are non-zero and repeatable."""
    return max(1, len(_WORD.findall(text)))


def hash_embedding(text: str, dim: int = 64) -> list[float]:
    """Bag-of-words hashing embedding: texts sharing words get similar vectors."""
    vector = [0.0] * dim
    for word in _WORD.findall(text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
        index = int.from_bytes(digest, "little") % dim
        vector[index] += 1.0
    norm = sum(v * v for v in vector) ** 0.5 or 1.0
    return [v / norm for v in vector]


class FakeOpenAIServer:
    """Threaded HTTP server on 127.0.0.1; use as a context manager or start()/stop().

    ``hung_up`` counts answers the client had gone away before receiving (a cancelled call,
    such as one a hedged lookup's hit replaced): normal for a server, so not an error.
    """

    def __init__(
        self,
        *,
        responder: Responder = echo_responder,
        delay_s: float = 0.0,
        chunk_delay_s: float = 0.0,
        chunks: int = 4,
        embedding_dim: int = 64,
        models: tuple[str, ...] = ("gpt-4o-mini", "gpt-4o"),
    ) -> None:
        self.responder = responder
        self.delay_s = delay_s
        self.chunk_delay_s = chunk_delay_s
        self.chunks = chunks
        self.embedding_dim = embedding_dim
        self.models = models
        self.fail_next: list[int] = []
        self.abort_stream_after: int | None = None
        self.call_tools = False
        self.calls: Counter[str] = Counter()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.response_ids: list[str] = []  # ids of the Responses answers given, in order
        self.hung_up = 0
        self.min_cached_tokens = 1024
        self._prefixes: set[str] = set()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> FakeOpenAIServer:
        handler = type("Handler", (_Handler,), {"server_state": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def api_base(self) -> str:
        """Base URL to pass to LiteLLM as ``api_base`` (OpenAI-style, ends in /v1)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def chat_calls(self) -> int:
        return self.calls["chat"]

    @property
    def responses_calls(self) -> int:
        """Calls of the Responses endpoint (``POST /v1/responses``)."""
        return self.calls["responses"]

    def reset(self) -> None:
        with self._lock:
            self.calls.clear()
            self.requests.clear()
            self.headers.clear()
            self.response_ids.clear()
            self.fail_next.clear()
            self._prefixes.clear()
        self.abort_stream_after = None
        self.call_tools = False

    def tool_call(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The tool call answering ``body`` when ``call_tools`` is on and it offers tools."""
        tools = body.get("tools") or []
        if not (self.call_tools and tools) or body.get("tool_choice") == "none":
            return None
        question = _last_user_text(body)
        return {
            "id": "call_" + hashlib.sha1(question.encode()).hexdigest()[:16],
            "type": "function",
            "function": {
                "name": tools[0]["function"]["name"],
                "arguments": json.dumps({"question": question}),
            },
        }

    def usage(self, body: dict[str, Any], answer: str) -> dict[str, Any]:
        """Token usage of an answer, with what the modelled prompt cache served."""
        messages = body.get("messages") or []
        prompt = sum(count_tokens(json.dumps(m.get("content"))) for m in messages)
        parts: list[Any] = []  # (the message's other fields with its first part, the part)
        for message in messages:
            content = message.get("content")
            head = {k: v for k, v in message.items() if k != "content"}
            items = content if isinstance(content, list) else [content]
            parts += [([head] if i == 0 else [], item) for i, item in enumerate(items)]
        tokens = [count_tokens(json.dumps(item)) for _, item in parts]
        completion = count_tokens(answer)
        usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        key = body.get("prompt_cache_key")
        if key is None:
            return usage
        cached = 0
        running = hashlib.sha256(json.dumps([key, body.get("model")]).encode())
        with self._lock:
            for i, part in enumerate(parts):
                running.update(json.dumps(part, sort_keys=True).encode())
                digest = running.hexdigest()
                size = sum(tokens[: i + 1])
                if digest in self._prefixes and size >= self.min_cached_tokens:
                    cached = min(size, prompt)
                self._prefixes.add(digest)
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
        return usage

    # -- used by the handler ---------------------------------------------------------------
    def _record(self, kind: str, body: dict[str, Any], headers: dict[str, str]) -> int | None:
        with self._lock:
            self.calls[kind] += 1
            self.requests.append(body)
            self.headers.append(headers)
            return self.fail_next.pop(0) if self.fail_next else None


class _Handler(BaseHTTPRequestHandler):
    server_state: FakeOpenAIServer
    protocol_version = "HTTP/1.1"
    # Headers and body go out as separate writes; with Nagle on, the body waits for the
    # client's delayed ACK (~40 ms on Linux) and every call looks 40 ms slower than it is.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: object) -> None:  # silence stderr logging
        return

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        try:
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client went away meanwhile
            with self.server_state._lock:
                self.server_state.hung_up += 1
            self.close_connection = True

    def _send_error(self, status: int) -> None:
        kind = {400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error"}
        self._send_json(
            status,
            {
                "error": {
                    "message": f"injected upstream error {status}",
                    "type": kind.get(status, "server_error"),
                    "param": None,
                    "code": str(status),
                }
            },
        )

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            state = self.server_state
            data = [{"id": m, "object": "model", "owned_by": "fake"} for m in state.models]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_json(404, {"error": {"message": "not found", "type": "not_found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        headers = {k.lower(): v for k, v in self.headers.items()}
        state = self.server_state
        if self.path.rstrip("/").endswith("/chat/completions"):
            failure = state._record("chat", body, headers)
            if state.delay_s:
                time.sleep(state.delay_s)
            if failure is not None:
                self._send_error(failure)
            elif body.get("stream"):
                self._stream_chat(body)
            else:
                self._chat(body)
        elif self.path.rstrip("/").endswith("/responses"):
            failure = state._record("responses", body, headers)
            if state.delay_s:
                time.sleep(state.delay_s)
            if failure is not None:
                self._send_error(failure)
            else:
                self._responses(body, state.calls["responses"])
        elif self.path.rstrip("/").endswith("/embeddings"):
            failure = state._record("embeddings", body, headers)
            if failure is not None:
                self._send_error(failure)
                return
            inputs = body.get("input")
            if isinstance(inputs, str) or (inputs and isinstance(inputs[0], int)):
                inputs = [inputs]  # one text, or one list of token ids
            # token ids are embedded as their decimal text, so they are deterministic too
            texts = [t if isinstance(t, str) else " ".join(map(str, t)) for t in inputs or []]
            data = [
                {
                    "object": "embedding",
                    "index": i,
                    "embedding": hash_embedding(t, state.embedding_dim),
                }
                for i, t in enumerate(texts)
            ]
            tokens = sum(count_tokens(t) for t in texts)
            self._send_json(
                200,
                {
                    "object": "list",
                    "data": data,
                    "model": body.get("model"),
                    "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                },
            )
        else:
            self._send_json(404, {"error": {"message": "not found", "type": "not_found"}})

    def _chat(self, body: dict[str, Any]) -> None:
        call = self.server_state.tool_call(body)
        if call is not None:
            self._send_json(
                200,
                {
                    "id": f"chatcmpl-{call['id']}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                            "finish_reason": "tool_calls",
                        }
                    ],
                    "usage": self.server_state.usage(body, call["function"]["arguments"]),
                },
            )
            return
        answer = self.server_state.responder(body)
        self._send_json(
            200,
            {
                "id": f"chatcmpl-{hashlib.sha1(answer.encode()).hexdigest()[:12]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": answer},
                        "finish_reason": "stop",
                    }
                ],
                "usage": self.server_state.usage(body, answer),
            },
        )

    def _responses(self, body: dict[str, Any], call: int) -> None:
        answer = self.server_state.responder(responses_api.as_chat(body))
        ident = responses_api.response_id(answer, call)
        with self.server_state._lock:
            self.server_state.response_ids.append(ident)
        completed = responses_api.response_body(body, answer, ident, count_tokens)
        if not body.get("stream"):
            self._send_json(200, completed)
            return
        n = max(1, self.server_state.chunks)
        step = max(1, -(-len(answer) // n))
        pieces = [answer[i : i + step] for i in range(0, len(answer), step)] or [""]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            for event in responses_api.response_events(completed, pieces):
                frame = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                self.wfile.write(frame.encode())
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return
        finally:
            self.close_connection = True

    def _stream_chat(self, body: dict[str, Any]) -> None:
        state = self.server_state
        answer = state.responder(body)
        n = max(1, state.chunks)
        step = max(1, -(-len(answer) // n))
        pieces = [answer[i : i + step] for i in range(0, len(answer), step)] or [""]
        ident = f"chatcmpl-{hashlib.sha1(answer.encode()).hexdigest()[:12]}"
        created = int(time.time())
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()

        def event(delta: dict[str, Any], finish: str | None, **extra: Any) -> None:
            chunk = {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": body.get("model"),
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                **extra,
            }
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()

        try:
            call = state.tool_call(body)
            if call is not None:
                event({"role": "assistant", "tool_calls": [{"index": 0, **call}]}, None)
                event({}, "tool_calls")
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                return
            for i, piece in enumerate(pieces):
                if state.abort_stream_after is not None and i >= state.abort_stream_after:
                    self.close_connection = True
                    return  # connection dropped mid-stream, no [DONE]
                delta = {"content": piece} if i else {"role": "assistant", "content": piece}
                event(delta, None)
                if state.chunk_delay_s:
                    time.sleep(state.chunk_delay_s)
            event({}, "stop")
            if (body.get("stream_options") or {}).get("include_usage"):
                usage_chunk: dict[str, Any] = {
                    "id": ident,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": body.get("model"),
                    "choices": [],
                    "usage": self.server_state.usage(body, answer),
                }
                self.wfile.write(f"data: {json.dumps(usage_chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return
        finally:
            self.close_connection = True
