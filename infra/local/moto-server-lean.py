# moto_server without the per-request work that is not S3's: run before moto-server-atomic.py
# in the same launcher text (services.mjs joins them). What S3 answers is unchanged; what goes:
#
# - The service lookup by host, made again for every request: moto's dispatcher lists its own
#   package folder (a listdir and ~170 stat calls) and tries every service's URL patterns to find
#   that a request signed for `s3` in `us-east-1` goes to the S3 app. The answer depends only on
#   the host name and the installed package, so it is kept per host name.
# - A new connection, and a new thread, for every request: the dev server (werkzeug) answers each
#   with `Connection: close`, because Python's http.server cannot drain a request body the app
#   did not read before the next request line. Here the body is read in full first (by its
#   Content-Length), so the connection can be kept; a chunked request still closes it. While the
#   app runs, the handler's reader is an empty buffer, and the dev server's drain after each
#   answer (it reads whatever arrives within 10 ms, safe only when the connection closes) is
#   skipped on a kept connection, so it cannot take the next request.
# - Per-request work around the S3 app: moto-server-requests.py, run after this file.
# - Nagle's algorithm on kept connections: an answer is written as its head, then its body;
#   without TCP_NODELAY the body can wait for the client's delayed ACK of the head.
# - One log line per request (TURNLINE_MOTO_LOG_REQUESTS=1 keeps them). Errors are still logged.
import io
import os
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication
from werkzeug.serving import WSGIRequestHandler

_backend_for_host = DomainDispatcherApplication.get_backend_for_host
_backends = {}


def _get_backend_for_host_kept(self, host):
    # Called under the dispatcher's lock; None (no backend) is kept as well.
    if host not in _backends:
        _backends[host] = _backend_for_host(self, host)
    return _backends[host]


DomainDispatcherApplication.get_backend_for_host = _get_backend_for_host_kept

_make_environ = WSGIRequestHandler.make_environ
_send_header = WSGIRequestHandler.send_header
# Whether the request this thread answers keeps its connection (each connection has a thread of
# its own: ThreadingMixIn); read by the drain below.
_connection = threading.local()


def _make_environ_buffered(self):
    environ = _make_environ(self)
    self._turnline_keep = False
    _connection.kept = False
    if "wsgi.input_terminated" in environ:
        return environ  # chunked: the body's end is found by reading it; close as before
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return environ
    if length < 0:
        return environ
    body = self.rfile.read(length) if length > 0 else b""
    if len(body) != length:
        return environ  # the client went away mid-body
    environ["wsgi.input"] = io.BytesIO(body)
    self._turnline_keep = True
    _connection.kept = True
    self.rfile = io.BytesIO()  # the connection's reader is given back after the answer
    return environ


def _send_header_kept(self, keyword, value):
    if (
        keyword.lower() == "connection"
        and value.lower() == "close"
        and getattr(self, "_turnline_keep", False)
    ):
        return  # the body was read in full: the next request on this connection can be read
    _send_header(self, keyword, value)


_run_wsgi = WSGIRequestHandler.run_wsgi


def _run_wsgi_kept(self):
    reader = self.rfile
    try:
        _run_wsgi(self)
    finally:
        self.rfile = reader


WSGIRequestHandler.run_wsgi = _run_wsgi_kept
WSGIRequestHandler.disable_nagle_algorithm = True
WSGIRequestHandler.make_environ = _make_environ_buffered
WSGIRequestHandler.send_header = _send_header_kept

# The dev server's drain after each answer waits up to 10 ms for more bytes on the socket (it reads
# whatever arrives, then closes the connection). On a kept connection the body was read in full
# and whatever arrives next is the next request, so there is nothing to drain: the thread goes
# back to reading requests at once instead of making an epoll selector per request and sitting in
# it until the next request or the 10 ms are up. A connection that closes (a chunked body) is
# drained as before.
import selectors

import werkzeug.serving


class _NothingToDrain:
    def register(self, *args, **kwargs):
        return None

    def select(self, timeout=None):
        return []

    def close(self):
        return None


class _ServingSelectors:
    EVENT_READ = selectors.EVENT_READ

    @staticmethod
    def DefaultSelector():
        if getattr(_connection, "kept", False):
            return _NothingToDrain()
        return selectors.DefaultSelector()


werkzeug.serving.selectors = _ServingSelectors

if os.environ.get("TURNLINE_MOTO_LOG_REQUESTS") != "1":
    WSGIRequestHandler.log_request = lambda self, code="-", size="-": None

# Each request's own record, when asked (TURNLINE_MOTO_REQUEST_LOG_FD: a file descriptor the
# launcher inherits, opened for appending; unset, nothing is noted). Two lines per request, each
# written whole with one write: `b <id> <ns> <method> <access key id>` once its request line and
# headers are read, `e <id> <ns> <body bytes>` after the request (<ns>: when the answer's last
# bytes began to be handed to the socket; -1 bytes: a chunked body); <ns> is CLOCK_MONOTONIC
# (time.monotonic_ns(), Node's process.hrtime.bigint()). The start line is written before any
# answer, so a reader that has seen a request's answer can wait for its end line (written right
# after the answer, on the same thread).
_request_log_fd = os.environ.get("TURNLINE_MOTO_REQUEST_LOG_FD")
if _request_log_fd:
    import itertools
    import time

    _log_fd = int(_request_log_fd)
    _request_ids = itertools.count(1)
    _parse_request = WSGIRequestHandler.parse_request
    _run_wsgi_noted = WSGIRequestHandler.run_wsgi

    class _NotedWriter:
        # The connection's writer, noting when it last began a write: the answer's last bytes go
        # to the socket from then on. (Noted after the write, the time could fall after the
        # client already had them: the thread can wait for the GIL once the bytes are sent.)
        def __init__(self, raw):
            self._raw = raw
            self.last = 0

        def write(self, data):
            self.last = time.monotonic_ns()
            return self._raw.write(data)

        def __getattr__(self, name):
            return getattr(self._raw, name)

    def _access_key(self):
        credential = (self.headers.get("Authorization") or "").partition("Credential=")[2]
        return credential.partition("/")[0] or "-"

    def _note_end(self):
        request_id = getattr(self, "_turnline_request", None)
        if request_id is None:
            return
        self._turnline_request = None
        body = getattr(self, "_turnline_body", -1)
        ended = self.wfile.last if self.wfile.last > self._turnline_from else time.monotonic_ns()
        os.write(_log_fd, f"e {request_id} {ended} {body}\n".encode())

    def _parse_request_noted(self):
        started = time.monotonic_ns()
        if not isinstance(self.wfile, _NotedWriter):
            self.wfile = _NotedWriter(self.wfile)
        self._turnline_from = started
        parsed = _parse_request(self)
        request_id = next(_request_ids)
        self._turnline_request = request_id
        self._turnline_body = -1
        key = _access_key(self) if parsed else "-"
        method = getattr(self, "command", None) or "-"
        os.write(_log_fd, f"b {request_id} {started} {method} {key}\n".encode())
        if not parsed:
            _note_end(self)
        return parsed

    def _make_environ_noted(self):
        environ = _make_environ_buffered(self)
        if getattr(self, "_turnline_keep", False):
            self._turnline_body = int(environ.get("CONTENT_LENGTH") or 0)
        return environ

    def _run_wsgi_logged(self):
        try:
            _run_wsgi_noted(self)
        finally:
            _note_end(self)

    WSGIRequestHandler.parse_request = _parse_request_noted
    WSGIRequestHandler.make_environ = _make_environ_noted
    WSGIRequestHandler.run_wsgi = _run_wsgi_logged
