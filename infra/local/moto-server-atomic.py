# moto_server with S3's conditional writes made atomic, as they are on AWS.
#
# moto checks If-Match / If-None-Match and then stores the object in two separate steps, and its
# server answers each request on its own thread: two racing conditional PUTs of one key can both
# pass the check and both succeed, which S3 never allows (one wins, the other gets 412). Every
# compare-and-swap of the storage protocol (commits, leases, callback claims) relies on that
# guarantee, so this launcher runs the S3 handler's writes (PUT, POST, DELETE of a key) one at a
# time. Reads are not serialised. services.mjs runs it with the chroot's python3 (the text in an
# environment variable, run by a one-line -c, after moto-server-lean.py and
# moto-server-requests.py), followed by the word
# moto_server and its arguments.
import sys
import threading

from moto.s3.responses import S3Response
from moto.server import main

_writes = threading.Lock()
_key_response = S3Response._key_response


def _key_response_atomic(self, request, full_url):
    if request.method in ("PUT", "POST", "DELETE"):
        with _writes:
            return _key_response(self, request, full_url)
    return _key_response(self, request, full_url)


S3Response._key_response = _key_response_atomic

if __name__ == "__main__":
    sys.argv = sys.argv[1:]
    sys.exit(main())
