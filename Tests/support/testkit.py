"""What the Python end-to-end tests share: the check tally, a free loopback port, a fetch that
also returns error statuses, and a JPEG's size. Imported by Tests/feeds, Tests/pages and
Tests/browser (each adds this folder to sys.path)."""

import socket
import urllib.error
import urllib.request


class Results:
    """One line per check (`ok   - name` or `FAIL - name: detail`), and the counts."""

    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
            print("ok   - %s" % name, flush=True)
        else:
            self.failed += 1
            print("FAIL - %s%s" % (name, ": " + str(detail) if detail else ""), flush=True)
        return ok

    def info(self, text):
        print("info - %s" % text, flush=True)

    def summary(self):
        """Prints `N passed, M failed`; returns the exit status (1 if any failed)."""
        print("%d passed, %d failed" % (self.passed, self.failed))
        return 1 if self.failed else 0


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fetch(url, timeout=30, headers=None):
    """(status, headers, body), also for an HTTP error status."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def jpeg_size(data):
    """(width, height) from a JPEG's first SOF marker, or None."""
    if data[:2] != b"\xff\xd8":
        return None
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        length = int.from_bytes(data[i + 2 : i + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2):
            return int.from_bytes(data[i + 7 : i + 9], "big"), int.from_bytes(data[i + 5 : i + 7], "big")
        i += 2 + length
    return None
