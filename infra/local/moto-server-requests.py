# moto_server's per-request work around the S3 app made cheaper, each piece answering exactly as
# before: run after moto-server-lean.py and before moto-server-atomic.py in the same launcher text
# (services.mjs joins them). A PUT or a GET costs moto ~20 % less CPU with the first four (1.1 ->
# 0.9 ms, 0.8 -> 0.6 ms for a missing key), ~10 % less again with the last two (docs/performance.md);
# none is in S3's semantics, and what moto answers and how it locks conditional writes are
# untouched.
import http.client
import re
import string

import flask.debughelpers
import flask_cors.core
import flask_cors.extension
import moto.core.responses
from flask import request as _current_request
from moto.moto_api._internal import mock_random
from werkzeug.datastructures import Headers, MultiDict

# Header lines parsed without the email package when they are plain `Name: value` lines, as
# every client of these benches and tests sends them (http.server hands them to email.parser,
# ~5 % of a request's CPU here). The message is the one email.parser makes of such lines: the
# same headers in the same order, each value stripped as compat32 strips it, an empty payload.
# Anything else — a folded line, a bare CR, a name email.parser would not take, a "From " line,
# a multipart or message content type, a missing blank line — goes to email.parser as before.
_parse_header_lines = http.client._parse_header_lines
_HEADER_NAME = re.compile(r"[\x21-\x39\x3b-\x7e]+")


def _parse_header_lines_plain(header_lines, _class=http.client.HTTPMessage):
    if not header_lines or header_lines[-1] not in (b"\r\n", b"\n"):
        return _parse_header_lines(header_lines, _class)
    headers = []
    for line in header_lines[:-1]:
        text = line.decode("iso-8859-1")
        end = -2 if text.endswith("\r\n") else -1
        name, colon, value = text[:end].partition(":")
        if (
            not colon
            or "\r" in value
            or not _HEADER_NAME.fullmatch(name)
            or text.startswith("From ")
        ):
            return _parse_header_lines(header_lines, _class)
        value = value.lstrip(" \t")
        if name.lower() == "content-type" and value.partition(";")[0].strip().lower().startswith(
            ("multipart/", "message/")
        ):
            return _parse_header_lines(header_lines, _class)
        headers.append((name, value))
    message = _class()
    for name, value in headers:
        message.set_raw(name, value)
    message.set_payload("")
    return message


http.client._parse_header_lines = _parse_header_lines_plain

# Flask's debug mode (moto turns it on) gives each request's `files` a subclass of its own, made
# by a class statement per request (~5 % of a request's CPU here), so that a missing file named
# in the form raises a clearer error. The same subclass is made once per class of `files` and
# finds the request in its context: the same error, for the same requests.
_enctype_error_classes = {}


def _attach_enctype_error_multidict_once(request):
    oldcls = request.files.__class__
    newcls = _enctype_error_classes.get(oldcls)
    if newcls is None:

        class newcls(oldcls):
            def __getitem__(self, key):
                try:
                    return super().__getitem__(key)
                except KeyError as e:
                    current = _current_request._get_current_object()
                    if key not in current.form:
                        raise
                    raise flask.debughelpers.DebugFilesKeyError(current, key).with_traceback(
                        e.__traceback__
                    ) from None

        newcls.__name__ = oldcls.__name__
        newcls.__module__ = oldcls.__module__
        _enctype_error_classes[oldcls] = newcls
    request.files.__class__ = newcls


flask.debughelpers.attach_enctype_error_multidict = _attach_enctype_error_multidict_once

# flask-cors writes every answer's CORS headers to its debug log as str(headers) whether the log
# is on or not (~2 % of a request's CPU here): the same headers set, the string made only when
# the line is logged.


def _set_cors_headers(resp, options):
    if hasattr(resp, flask_cors.core.FLASK_CORS_EVALUATED):
        flask_cors.core.LOG.debug("CORS have been already evaluated, skipping")
        return resp
    if not isinstance(resp.headers, Headers) and not isinstance(resp.headers, MultiDict):
        resp.headers = MultiDict(resp.headers)
    headers_to_set = flask_cors.core.get_cors_headers(
        options, _current_request.headers, _current_request.method
    )
    flask_cors.core.LOG.debug("Settings CORS headers: %s", headers_to_set)
    for k, v in headers_to_set.items():
        resp.headers.add(k, v)
    return resp


flask_cors.extension.set_cors_headers = _set_cors_headers

# The request id of every answer (x-amzn-requestid: 52 letters and digits from moto's random
# source) drawn in one call instead of 52.
_REQUEST_ID_CHARS = string.ascii_letters + string.digits


def _gen_amzn_requestid_long(headerdict=None):
    request_id = "".join(mock_random.choices(_REQUEST_ID_CHARS, k=52))
    if headerdict is not None and isinstance(headerdict, dict):
        headerdict.update({"x-amzn-requestid": request_id})
    return request_id


moto.core.responses.gen_amzn_requestid_long = _gen_amzn_requestid_long

# Whether a request names its bucket in the host (S3Response.subdomain_based_buckets), decided
# again 5 times a request, each time with up to 20 regular-expression matches on the host: the
# answer depends only on the host and two settings (S3_IGNORE_SUBDOMAIN_BUCKETNAME,
# MOTO_S3_CUSTOM_ENDPOINTS), so it is kept per host and the settings as they are at each call.
# A request without a host header is decided as before, every time.
import os

import moto.s3.responses
from moto import settings

_subdomain_based_buckets = moto.s3.responses.S3Response.subdomain_based_buckets
_subdomain_by_host = {}


def _subdomain_based_buckets_kept(self, request):
    host = request.headers.get("host", request.headers.get("Host"))
    if not host or not isinstance(host, str):
        return _subdomain_based_buckets(self, request)
    key = (
        host,
        settings.S3_IGNORE_SUBDOMAIN_BUCKETNAME,
        os.environ.get("MOTO_S3_CUSTOM_ENDPOINTS"),
    )
    answer = _subdomain_by_host.get(key)
    if answer is None:
        answer = _subdomain_based_buckets(self, request)
        if len(_subdomain_by_host) >= 256:
            _subdomain_by_host.clear()
        _subdomain_by_host[key] = answer
    return answer


moto.s3.responses.S3Response.subdomain_based_buckets = _subdomain_based_buckets_kept

# A request's headers are read from its WSGI environment ~50 times a request, each name turned
# into its environment key (upper case, "-" to "_", "HTTP_" before it) anew: the key is kept per
# name. Anything but a plain str goes to werkzeug's own lookup, as does a name not yet seen.
from werkzeug.datastructures.headers import EnvironHeaders

_environ_key = EnvironHeaders._get_key
_environ_names = {}


def _environ_key_kept(self, key):
    name = _environ_names.get(key) if type(key) is str else None
    if name is None:
        if type(key) is not str:
            return _environ_key(self, key)
        name = key.upper().replace("-", "_")
        if name not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            name = f"HTTP_{name}"
        if len(_environ_names) >= 1024:
            _environ_names.clear()
        _environ_names[key] = name
    return self.environ[name]


EnvironHeaders._get_key = _environ_key_kept
