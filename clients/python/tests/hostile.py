"""A real HTTP server in front of the test server that misbehaves on the requests a test picks, as
a broken server, proxy or network would: it answers them itself (a 429 with Retry-After, a body
without end) or forwards them and stops part way, the connection left open and silent. Every
other request is forwarded untouched; each request is recorded (the TypeScript tests' twin is
test/support/hostile-front.ts)."""

from __future__ import annotations

import http.client
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Optional

HOP = {"content-length", "transfer-encoding", "connection", "content-encoding"}


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    #: ``time.monotonic()`` when its head arrived.
    at: float


#: What to do with one request: answer on the handler (``forward()`` sends it to the real server).
Act = Callable[["_Handler", Callable[[], http.client.HTTPResponse]], None]


class HostileFront:
    def __init__(self, target: str, pick: Callable[[Seen], Optional[Act]]) -> None:
        host, port = target.removeprefix("http://").split(":")
        self.target = (host, int(port))
        self.pick = pick
        self.seen: list[Seen] = []
        self.closing = threading.Event()
        front = self

        class Handler(_Handler):
            owner = front

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.closing.set()
        self._server.shutdown()
        self._server.server_close()


class _Handler(BaseHTTPRequestHandler):
    owner: HostileFront
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._handle()

    do_POST = do_DELETE = do_GET

    def _handle(self) -> None:
        seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, time.monotonic())
        self.owner.seen.append(seen)
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else None

        def forward() -> http.client.HTTPResponse:
            connection = http.client.HTTPConnection(*self.owner.target)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            connection.request(self.command, self.path, body=body, headers=headers)
            return connection.getresponse()

        act = self.owner.pick(seen) or pass_through
        try:
            act(self, forward)
        except OSError:
            pass
        self.close_connection = True

    def head(self, status: int, headers: dict[str, str]) -> None:
        """A head whose body runs until the connection closes."""
        self.send_response(status)
        for name, value in headers.items():
            if name.lower() not in HOP:
                self.send_header(name, value)
        self.send_header("connection", "close")
        self.end_headers()


def pass_through(handler: _Handler, forward: Callable[[], http.client.HTTPResponse]) -> None:
    upstream = forward()
    handler.head(upstream.status, dict(upstream.getheaders()))
    while data := upstream.read1(65536):
        handler.wfile.write(data)
        handler.wfile.flush()


def stall_after(size: int) -> Act:
    """Forwards the answer's head and ``size`` bytes of its body, then nothing: the connection
    stays open and silent until the front closes."""

    def act(handler: _Handler, forward: Callable[[], http.client.HTTPResponse]) -> None:
        upstream = forward()
        handler.head(upstream.status, dict(upstream.getheaders()))
        sent = 0
        while sent < size and (data := upstream.read1(size - sent)):
            handler.wfile.write(data)
            handler.wfile.flush()
            sent += len(data)
        upstream.close()
        handler.owner.closing.wait()

    return act


def swallow_the_answer(handler: _Handler, forward: Callable[[], http.client.HTTPResponse]) -> None:
    """The request reaches the server, which runs it; its answer never reaches the client."""
    forward().close()
    handler.owner.closing.wait()


def answer(status: int, headers: dict[str, str], body: str) -> Act:
    def act(handler: _Handler, forward: Callable[[], http.client.HTTPResponse]) -> None:
        handler.head(status, headers)
        handler.wfile.write(body.encode())

    return act


def endless(status: int, headers: dict[str, str], head: str, piece: str) -> Act:
    """``head``, then ``piece`` again and again while the client reads."""

    def act(handler: _Handler, forward: Callable[[], http.client.HTTPResponse]) -> None:
        handler.head(status, headers)
        handler.wfile.write(head.encode())
        chunk = (piece * max(1, 65536 // len(piece))).encode()
        while not handler.owner.closing.is_set():
            handler.wfile.write(chunk)

    return act
