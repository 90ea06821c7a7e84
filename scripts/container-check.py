#!/usr/bin/env python3
"""The HTTP checks of scripts/container-test.sh against the container's service on 127.0.0.1.

  container-check.py PORT cards        /healthz, /readyz (where the build serves it), one card of
                                       each format the service has (avif when the OpenAPI names it
                                       and /cards/1.avif is not a 400), each decoded (magic bytes and
                                       pixel size)
  container-check.py PORT drain CMD... a big card read by a slow reader (a 4 KiB receive buffer);
                                       once its first bytes are in, CMD (the SIGTERM) runs; the rest
                                       must then arrive whole (Content-Length, PNG end chunk)

Every wait is on a socket event with a timeout (a hang guard); nothing sleeps. Prints one line
per check; exits 1 at the first failure.
"""

import http.client
import socket
import struct
import subprocess
import sys

TIMEOUT = 60


def fail(message):
    print(f"innerpeace: container test FAILED: {message}", flush=True)
    sys.exit(1)


def get(port, path, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    connection.request("GET", path, headers=headers or {})
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, dict((k.lower(), v) for k, v in response.getheaders()), body


def png_size(data):
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", data[16:24])


def jpeg_size(data):
    if data[:2] != b"\xff\xd8":
        return None
    index = 2
    while index + 9 < len(data):
        if data[index] != 0xFF:
            return None
        marker = data[index + 1]
        length = struct.unpack(">H", data[index + 2 : index + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            height, width = struct.unpack(">HH", data[index + 5 : index + 9])
            return width, height
        index += 2 + length
    return None


def webp_size(data):
    if data[:4] != b"RIFF" or data[8:12] != b"WEBP":
        return None
    chunk = data[12:16]
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L":
        bits = struct.unpack("<I", data[21:25])[0]
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    return None


def avif_size(data):
    if data[4:8] != b"ftyp" or b"avif" not in data[8 : struct.unpack(">I", data[:4])[0]]:
        return None
    at = data.find(b"ispe")  # the image spatial extents property: version/flags, width, height
    if at < 0:
        return None
    return struct.unpack(">II", data[at + 8 : at + 16])


DECODERS = {"png": png_size, "jpeg": jpeg_size, "webp": webp_size, "avif": avif_size}


def check_cards(port):
    status, _, body = get(port, "/healthz")
    if status != 200 or b'"ok"' not in body:
        fail(f"/healthz answered {status} {body[:200]!r}")
    print(f"ok: /healthz 200 {body.decode(errors='replace').strip()}")
    _, _, openapi = get(port, "/openapi.yaml")
    if b"/readyz" in openapi:
        status, _, body = get(port, "/readyz")
        if status != 200:
            fail(f"/readyz answered {status} {body[:200]!r}")
        print(f"ok: /readyz 200 {body.decode(errors='replace').strip()}")
    else:
        print("note: /readyz is not in this build's OpenAPI document (readiness not merged yet): not checked")
    formats = ["png", "jpeg", "webp"]
    status, _, body = get(port, "/cards/1.avif?w=400&h=300")
    if b"avif" in openapi and status != 400:
        formats.append("avif")
    else:
        print(f"note: this build has no AVIF (/cards/1.avif answered {status}): not checked")
    for extension in formats:
        status, headers, body = get(port, f"/cards/1.{extension}?w=400&h=300")
        size = DECODERS[extension](body) if status == 200 else None
        if size != (400, 300):
            fail(f"/cards/1.{extension}: {status} {headers.get('content-type')} {len(body)} bytes, size {size}")
        print(f"ok: /cards/1.{extension} 200 {headers.get('content-type')} {len(body)} bytes, decodes as 400x300")


def check_drain(port, command):
    path = "/cards/2.png?w=2048&h=2048"
    connection = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    connection.settimeout(TIMEOUT)
    connection.connect(("127.0.0.1", port))
    connection.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = connection.recv(4096)
        if not chunk:
            fail(f"{path}: the connection closed before the head: {received[:200]!r}")
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict((k.strip().lower(), v.strip()) for k, v in (line.split(":", 1) for line in lines[1:]))
    if not lines[0].startswith("HTTP/1.1 200") or "content-length" not in headers:
        fail(f"{path}: {lines[0]} {headers}")
    length = int(headers["content-length"])
    print(f"ok: {path} in flight ({len(body)} of {length} bytes read); sending SIGTERM", flush=True)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    while len(body) < length:
        chunk = connection.recv(1 << 16)
        if not chunk:
            fail(f"{path}: the connection closed after {len(body)} of {length} bytes")
        body += chunk
    if png_size(body) != (2048, 2048) or not body.endswith(b"IEND\xaeB`\x82"):
        fail(f"{path}: the answer is not a whole 2048x2048 PNG")
    print(f"ok: the in-flight answer completed after SIGTERM: {length} bytes, a whole 2048x2048 PNG "
          f"(Connection: {headers.get('connection', '-')}, then {'close' if not connection.recv(1) else 'more bytes'})")


def main():
    port = int(sys.argv[1])
    if sys.argv[2] == "cards":
        check_cards(port)
    elif sys.argv[2] == "drain":
        check_drain(port, sys.argv[3:])
    else:
        fail(f"unknown check {sys.argv[2]}")


if __name__ == "__main__":
    main()
