"""The server the tests talk to: `npm start` (infra/start.mjs) of this repository, as a real
process on a free port, with the offline demo model and sessions in a temporary folder; a TCP
proxy that tears connections in the middle of a response; and a front that misbehaves on the
requests a test picks (hostile.py)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest
from hostile import Act, HostileFront, Seen

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def server_url() -> Iterator[str]:
    data = tempfile.mkdtemp(prefix="turnline-py-")
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", ""),
        "HOST": "127.0.0.1",
        "PORT": "0",
        "TURNLINE_DATA_DIR": os.path.join(data, "sessions"),
        # A followed feed is ended by the server every second: the client reconnects.
        "TURNLINE_FOLLOW_MAX_SECONDS": "1",
    }
    process = subprocess.Popen(
        ["node", "infra/start.mjs"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    output: list[str] = []
    found: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line)
            match = re.search(r"listening on (http://\S+)", line)
            if match and not found:
                found.append(match.group(1))
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    ready.wait(120)
    if not found:
        process.kill()
        raise RuntimeError("npm start did not start:\n" + "".join(output))
    try:
        yield found[0]
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
        shutil.rmtree(data, ignore_errors=True)


class TearingProxy:
    """Forwards TCP connections to the server; every other connection is cut once the server has
    sent ``cut_after`` bytes of its answer (in the middle of a frame, as a dropped connection)."""

    def __init__(self, target: str, cut_after: int) -> None:
        host, port = target.removeprefix("http://").split(":")
        self.target = (host, int(port))
        self.cut_after = cut_after
        self.connections = 0
        self.cuts = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            cut = self.connections % 2 == 1
            threading.Thread(target=self._serve, args=(client, cut), daemon=True).start()

    def _serve(self, client: socket.socket, cut: bool) -> None:
        upstream = socket.create_connection(self.target)

        def forward_requests() -> None:
            try:
                while data := client.recv(65536):
                    upstream.sendall(data)
            except OSError:
                pass

        threading.Thread(target=forward_requests, daemon=True).start()
        sent = 0
        try:
            while data := upstream.recv(65536):
                if cut and sent + len(data) > self.cut_after:
                    client.sendall(data[: self.cut_after - sent])
                    self.cuts += 1
                    break
                client.sendall(data)
                sent += len(data)
        except OSError:
            pass
        finally:
            for sock in (client, upstream):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()

    def close(self) -> None:
        self._listener.close()


@pytest.fixture
def tearing_proxy(server_url: str) -> Iterator[TearingProxy]:
    proxy = TearingProxy(server_url, cut_after=700)
    try:
        yield proxy
    finally:
        proxy.close()


@pytest.fixture
def hostile(server_url: str) -> Iterator[Callable[[Callable[[Seen], bool], Act], HostileFront]]:
    """A front that does ``act`` to the first request ``matches`` picks."""
    fronts: list[HostileFront] = []

    def start(matches: Callable[[Seen], bool], act: Act) -> HostileFront:
        done: list[bool] = []

        def pick(seen: Seen):
            if done or not matches(seen):
                return None
            done.append(True)
            return act

        front = HostileFront(server_url, pick)
        fronts.append(front)
        return front

    yield start
    for front in fronts:
        front.close()


def wait_until(check, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("the condition did not come true in time")
        time.sleep(0.05)
