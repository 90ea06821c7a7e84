#!/usr/bin/env python3
"""The page at `/` in a real browser: headless Chromium driven over the DevTools protocol.

Starts `innerpeace serve` on a free loopback port and Debian's `chromium`, and opens the page at
390x844 with a device scale factor of 3, 768x1024 at 2, 1440x900 at 1 and 1920x1080 at 1. At
each: the card covers the window edge to edge (object-fit: cover, no bars, no scrollbars), its
pixels are at least the device pixels, it came as WebP (Accept), Share is at least 44x44, and
once the next card is prefetched a tap shows it within 100 ms (from the click to the next frame
after the swap). The first paint, recorded frame by frame from a script installed before the
document: the first image painted has the window's shape (never the og card cropped), the og card
is never requested, and the image and Share never move. Over the brightest photo (quote 9 on
yellow-flower.jpg, at 390x844@3 and 1440x900@1), Share's label is at least 4.5:1 against its own
background, both measured from screenshot pixels (the label shown, then hidden). Screenshots go
to $INNERPEACE_SHOTS (default /tmp/pages-shots). Then, at
1440x900: the space bar and Enter bring new cards, Tab reaches Share, and Share copies the share
message with the quote page's absolute URL (headless Chromium has no Web Share API) without
bringing a new card; the favicon answers.

        python3 Tests/browser/page_test.py --binary .build/debug/innerpeace

Needs Python 3.8+, `websocket-client` (pip) and `chromium` or `chromium-browser` on PATH.
Prints one line per check and ends with `N passed, M failed`; exits 1 if any check failed.
"""

import argparse
import collections
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support"))
from testkit import Results  # noqa: E402

try:
    import websocket  # websocket-client
except ImportError:
    print("page_test: needs websocket-client: pip install websocket-client", file=sys.stderr)
    print("0 passed, 1 failed")
    sys.exit(1)

import base64

BUDGET_SECONDS = 150.0  # the whole test before clean-up; clean-up is bounded on its own
WINDOW = (1440, 900)
VIEWPORTS = [(390, 844, 3), (768, 1024, 2), (1440, 900, 1), (1920, 1080, 1)]
SHOTS = os.environ.get("INNERPEACE_SHOTS", "/tmp/pages-shots")


class Deadline:
    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def left(self, cap):
        """At most `cap` seconds, and never past the overall deadline."""
        return max(0.0, min(cap, self.end - time.monotonic()))


class LineReader(threading.Thread):
    """Drains a child's pipe (so it never blocks on a full pipe) and keeps its recent lines."""

    def __init__(self, stream):
        super().__init__(daemon=True)
        self.stream = stream
        self.lines = queue.Queue()
        self.tail = collections.deque(maxlen=40)

    def run(self):
        try:
            for raw in iter(self.stream.readline, b""):
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                self.tail.append(line)
                self.lines.put(line)
        except (OSError, ValueError):
            pass
        self.lines.put(None)

    def wait_for(self, pattern, timeout):
        """The first match of `pattern` in a line read within `timeout` seconds, or None."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                return None
            if line is None:  # the child closed its output (it exited)
                return None
            match = re.search(pattern, line)
            if match:
                return match


class CDPError(Exception):
    pass


class CDP:
    """A minimal DevTools protocol client on the browser's websocket, with one flattened session."""

    def __init__(self, url, timeout):
        self.ws = websocket.create_connection(url, timeout=timeout, suppress_origin=True)
        self.next_id = 0
        self.session = None
        self.log = collections.deque(maxlen=30)  # page errors and console messages, shown on failure

    def close(self):
        try:
            self.ws.close()
        except Exception:  # noqa: BLE001 - closing anyway
            pass

    def call(self, method, params=None, timeout=10.0, browser=False):
        self.next_id += 1
        ident = self.next_id
        message = {"id": ident, "method": method, "params": params or {}}
        if self.session and not browser:
            message["sessionId"] = self.session
        self.ws.send(json.dumps(message))
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise CDPError("%s: no answer in %.0f s" % (method, timeout))
            self.ws.settimeout(left)
            try:
                data = json.loads(self.ws.recv())
            except websocket.WebSocketTimeoutException:
                raise CDPError("%s: no answer in %.0f s" % (method, timeout)) from None
            if data.get("id") == ident:
                if "error" in data:
                    raise CDPError("%s: %s" % (method, data["error"].get("message", data["error"])))
                return data.get("result", {})
            self.note_event(data)

    def note_event(self, data):
        method = data.get("method")
        params = data.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            text = details.get("exception", {}).get("description") or details.get("text", "")
            self.log.append("page exception: %s" % text)
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning"):
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            self.log.append("console.%s: %s" % (params.get("type"), args))
        elif method == "Log.entryAdded":
            entry = params.get("entry", {})
            if entry.get("level") in ("error", "warning"):
                self.log.append("log %s: %s %s" % (entry.get("level"), entry.get("text", ""), entry.get("url", "")))

    def evaluate(self, expression, timeout=5.0):
        result = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            timeout=timeout,
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text", "")
            raise CDPError("evaluate: %s" % text)
        return result.get("result", {}).get("value")

    def wait_until(self, predicate, timeout):
        """Polls the page's state until `predicate(state)` holds; returns (ok, last state)."""
        end = time.monotonic() + timeout
        state = {}
        while True:
            try:
                state = self.evaluate(STATE_JS)
            except CDPError as error:  # e.g. between two documents while navigating: ask again
                state = dict(state, error=str(error))
            else:
                if predicate(state):
                    return True, state
            if time.monotonic() >= end:
                return False, state
            time.sleep(0.1)

    def click(self, x, y):
        """A real left click: the browser's own input pipeline, not a synthetic DOM event."""
        base = {"x": x, "y": y, "button": "left", "clickCount": 1}
        self.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
        self.call("Input.dispatchMouseEvent", dict(base, type="mousePressed", buttons=1))
        self.call("Input.dispatchMouseEvent", dict(base, type="mouseReleased", buttons=0))

    def press(self, key, code, key_code, text=None):
        down = {
            "type": "keyDown" if text else "rawKeyDown",
            "key": key,
            "code": code,
            "windowsVirtualKeyCode": key_code,
            "nativeVirtualKeyCode": key_code,
        }
        if text:
            down["text"] = text
            down["unmodifiedText"] = text
        self.call("Input.dispatchKeyEvent", down)
        up = {k: v for k, v in down.items() if k not in ("text", "unmodifiedText")}
        up["type"] = "keyUp"
        self.call("Input.dispatchKeyEvent", up)


# Everything the checks look at, in one round trip. The page is found by role, not by id.
STATE_JS = r"""
(() => {
    const img = document.querySelector('img');
    const card = document.querySelector('[role="button"][tabindex="0"]');
    const live = document.querySelector('[aria-live]');
    const share = Array.from(document.querySelectorAll('button')).find(b => /share/i.test(b.textContent));
    const p = window.innerpeace || {};
    const rect = img ? img.getBoundingClientRect() : null;
    const root = document.documentElement || {scrollWidth: 0, scrollHeight: 0};
    return {
        complete: !!img && img.complete,
        naturalWidth: img ? img.naturalWidth : 0,
        naturalHeight: img ? img.naturalHeight : 0,
        src: img ? img.src : '',
        alt: img ? img.alt : '',
        quoteIndex: img ? img.getAttribute('data-quote-index') : null,
        objectFit: img ? getComputedStyle(img).objectFit : '',
        imgRect: rect ? [rect.left, rect.top, rect.width, rect.height] : null,
        loads: typeof p.loads === 'number' ? p.loads : 0,
        shareMessage: p.shareMessage || '',
        pageURL: p.pageURL || '',
        format: p.format || '',
        prefetched: !!p.prefetched,
        tappedAt: p.tappedAt || 0,
        paintedAt: p.paintedAt || 0,
        dpr: window.devicePixelRatio,
        shareRect: share ? [share.getBoundingClientRect().width, share.getBoundingClientRect().height] : null,
        innerWidth: window.innerWidth,
        innerHeight: window.innerHeight,
        scrollWidth: root.scrollWidth,
        scrollHeight: root.scrollHeight,
        liveText: live ? live.textContent.trim() : null,
        cardFocused: !!card && document.activeElement === card,
        shareFocused: !!share && document.activeElement === share,
        activeElement: document.activeElement ? document.activeElement.outerHTML.slice(0, 80) : '',
    };
})()
"""

FOCUS_CARD_JS = r"""
(() => {
    const card = document.querySelector('[role="button"][tabindex="0"]');
    card.focus();
    return document.activeElement === card;
})()
"""

FOCUS_SHARE_JS = r"""
(() => {
    const share = Array.from(document.querySelectorAll('button')).find(b => /share/i.test(b.textContent));
    share.focus();
    return document.activeElement === share;
})()
"""

SHARE_CENTRE_JS = r"""
(() => {
    const share = Array.from(document.querySelectorAll('button')).find(b => /share/i.test(b.textContent));
    const r = share.getBoundingClientRect();
    return [r.left + r.width / 2, r.top + r.height / 2];
})()
"""

CLEAR_LIVE_JS = r"""
(() => { document.querySelector('[aria-live]').textContent = ''; return true; })()
"""

READ_CLIPBOARD_JS = r"""
navigator.clipboard.readText().then(t => ({ok: true, text: t}), e => ({ok: false, text: String(e)}))
"""


# Installed before each document: from the first frame, what the card's image shows each frame
# (kept when it changes, at most 300 entries): its source, natural size, whether it is visible,
# and where the image and Share are.
FRAMES_JS = r"""
(() => {
    const frames = window.__frames = [];
    let last = '';
    let count = 0;
    function tick() {
        const img = document.querySelector('img');
        const share = Array.from(document.querySelectorAll('button')).find(b => /share/i.test(b.textContent));
        if (img) {
            const style = getComputedStyle(img);
            const r = img.getBoundingClientRect();
            const s = share ? share.getBoundingClientRect() : null;
            const entry = {
                src: img.currentSrc || img.src || '',
                nw: img.complete ? img.naturalWidth : 0,
                nh: img.complete ? img.naturalHeight : 0,
                visible: style.visibility !== 'hidden' && style.display !== 'none' && Number(style.opacity) > 0,
                rect: [r.left, r.top, r.width, r.height],
                share: s ? [s.left, s.top, s.width, s.height] : null,
            };
            const key = JSON.stringify(entry);
            if (key !== last && frames.length < 300) { frames.push(entry); last = key; }
        }
        if (++count < 3000) { requestAnimationFrame(tick); }
    }
    requestAnimationFrame(tick);
})()
"""

RESOURCES_JS = r"""
performance.getEntriesByType('resource').map(e => e.name)
"""

# Share's label shown or hidden (transparent), and where Share is, after two frames.
SHARE_LABEL_JS = r"""
new Promise(resolve => {
    const share = Array.from(document.querySelectorAll('button')).find(b => /share/i.test(b.textContent));
    share.style.color = %s;
    share.blur();
    requestAnimationFrame(() => requestAnimationFrame(() => {
        const r = share.getBoundingClientRect();
        resolve({rect: [r.left, r.top, r.width, r.height], color: getComputedStyle(share).color,
                 width: window.innerWidth});
    }));
})
"""


def png_pixels(data):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit, non-interlaced RGB or RGBA PNG."""
    import struct
    import zlib

    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, "PNG %r not decoded here" % (header,)
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * channels : x * channels + 3]) for x in range(width)])
        previous = line
    return width, height, rows


def luminance(rgb):
    """WCAG relative luminance of an sRGB colour."""

    def linear(v):
        v /= 255.0
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(v) for v in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def share_contrast(cdp):
    """Share's label against its own background, from screenshot pixels: the label's colour is
    the brightest pixel of the label's box with the label shown, the background the brightest
    pixel inside the pill (clear of its border and rounded ends) with the label hidden. Returns
    (ratio, label luminance, background luminance)."""

    def region(visible):
        info = cdp.evaluate(SHARE_LABEL_JS % ("''" if visible else "'transparent'"))
        shot = base64.b64decode(cdp.call("Page.captureScreenshot", {"format": "png"})["data"])
        width, height, rows = png_pixels(shot)
        scale = width / info["width"]
        x, y, w, h = (v * scale for v in info["rect"])
        inset_x, inset_y = h / 2 + 2 * scale, 3 * scale  # past the rounded ends and the 1 px border
        pixels = [
            rows[j][i]
            for j in range(int(y + inset_y), int(y + h - inset_y))
            for i in range(int(x + inset_x), int(x + w - inset_x))
            if 0 <= j < height and 0 <= i < width
        ]
        return max(luminance(p) for p in pixels)

    background = region(False)
    label = region(True)
    return (label + 0.05) / (background + 0.05), label, background


def describe(state):
    keys = ("loads", "preset", "complete", "naturalWidth", "naturalHeight", "alt", "liveText", "src", "error")
    return ", ".join("%s=%r" % (k, (state or {}).get(k)) for k in keys)


def find_chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def stop(process, group, grace):
    """SIGTERM, then SIGKILL after `grace` seconds: a process we started, or the group we made for it."""
    if process is None:
        return

    def send(sig):
        try:
            if group:
                os.killpg(process.pid, sig)  # the session made for it by start_new_session
            elif process.poll() is None:
                process.send_signal(sig)
        except (ProcessLookupError, PermissionError):
            pass

    if process.poll() is None:
        send(signal.SIGTERM)
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    send(signal.SIGKILL)  # the process if it is still there, and any helper left in its group
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def run(args, results, deadline, children):
    binary = os.path.abspath(args.binary)
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        results.check("the server binary exists", False, "%s is not an executable file" % binary)
        return

    # 1. The server, on a free loopback port.
    server = subprocess.Popen(
        [binary, "serve", "--host", "127.0.0.1", "--port", "0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    children["server"] = server
    server_out = children["server_out"] = LineReader(server.stdout)
    server_out.start()
    match = server_out.wait_for(r"listening on http://127\.0\.0\.1:(\d+)", deadline.left(30))
    if not results.check("the server starts and names its port", match is not None, "no 'listening on' line"):
        return
    base = "http://127.0.0.1:%s" % match.group(1)

    # The page itself, over plain HTTP.
    try:
        with urllib.request.urlopen(base + "/", timeout=deadline.left(10)) as response:
            status = response.status
            content_type = response.headers.get("Content-Type", "")
            html = response.read().decode("utf-8", "replace")
    except Exception as error:  # noqa: BLE001 - reported as a failed check
        status, content_type, html = None, "", str(error)
    results.check(
        "GET / is 200 text/html, lang en, titled Inner Peace",
        status == 200
        and content_type.startswith("text/html")
        and "<title>Inner Peace" in html
        and '<html lang="en"' in html,
        "status %r, content type %r" % (status, content_type),
    )
    links = re.findall(r"""(?:src|href)\s*=\s*["']?\s*((?:https?:)?//[^"'\s>]*)""", html)
    external = [link for link in links if not link.startswith(base + "/")]
    results.check("the page loads nothing from elsewhere", not external, ", ".join(external[:3]))

    # 2. Chromium, headless, with DevTools on a free port.
    chromium = find_chromium()
    if not results.check("chromium is on PATH", chromium is not None, "apt-get install -y chromium"):
        return
    profile = children["profile"] = tempfile.mkdtemp(prefix="innerpeace-chromium-")
    browser = children["browser"] = subprocess.Popen(
        [
            chromium,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--remote-debugging-port=0",
            "--user-data-dir=" + profile,
            "--window-size=%d,%d" % WINDOW,
            "about:blank",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, so its helpers are stopped with it
    )
    browser_err = children["browser_err"] = LineReader(browser.stderr)
    browser_err.start()
    match = browser_err.wait_for(r"DevTools listening on (ws://\S+)", deadline.left(20))
    if not results.check("chromium starts with DevTools", match is not None, "no 'DevTools listening' line"):
        return

    cdp = children["cdp"] = CDP(match.group(1), timeout=max(1.0, deadline.left(10)))
    target = cdp.call("Target.createTarget", {"url": "about:blank"}, browser=True)["targetId"]
    attached = cdp.call("Target.attachToTarget", {"targetId": target, "flatten": True}, browser=True)
    cdp.session = attached["sessionId"]
    for method in ("Page.enable", "Runtime.enable", "Log.enable"):
        cdp.call(method)
    cdp.call(
        "Emulation.setDeviceMetricsOverride",
        {"width": WINDOW[0], "height": WINDOW[1], "deviceScaleFactor": 1, "mobile": False},
    )
    cdp.call("Emulation.setFocusEmulationEnabled", {"enabled": True})  # a focused page, for the clipboard
    try:
        cdp.call(
            "Browser.grantPermissions",
            {"origin": base, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]},
            browser=True,
        )
    except CDPError as error:
        results.info("clipboard permission not granted (%s); Share may report it could not copy" % error)

    cdp.call("Page.addScriptToEvaluateOnNewDocument", {"source": FRAMES_JS})
    og_match = re.search(r'<meta property="og:image" content="([^"]+)"', html)
    og_image = og_match.group(1).replace("&amp;", "&") if og_match else ""

    # 3. Each viewport: the first card, covering, sharp, WebP; then a prefetched tap.
    os.makedirs(SHOTS, exist_ok=True)
    for width, height, scale in VIEWPORTS:
        name = "%dx%d@%d" % (width, height, scale)
        cdp.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": scale, "mobile": width < 800},
        )
        cdp.call("Page.navigate", {"url": base + "/"})
        ok, state = cdp.wait_until(
            lambda s: s["complete"] and s["naturalWidth"] > 0 and s["loads"] >= 1 and s["prefetched"],
            deadline.left(30),
        )
        if not results.check("%s: the first card loads and the next is prefetched" % name, ok, describe(state)):
            return
        w, h = state["innerWidth"], state["innerHeight"]
        results.check(
            "%s: the card covers the window edge to edge, no scrollbars" % name,
            state["imgRect"] == [0, 0, w, h]
            and state["objectFit"] == "cover"
            and state["scrollWidth"] <= w
            and state["scrollHeight"] <= h,
            "img at %r, object-fit %r, scroll %dx%d in %dx%d"
            % (state["imgRect"], state["objectFit"], state["scrollWidth"], state["scrollHeight"], w, h),
        )
        nw, nh = state["naturalWidth"], state["naturalHeight"]
        # Covering crops the card's longer way; the visible part must still have a card pixel
        # per device pixel: the card's scale to cover is at most 1 device pixel per card pixel.
        cover = max(w * scale / nw, h * scale / nh)
        results.check(
            "%s: the card's pixels are at least the device pixels (%dx%d)" % (name, nw, nh),
            cover <= 1.0 and nw * 1.0 / nh > 0 and abs(nw / nh - w / h) < 0.05 * (w / h),
            "card %dx%d for %dx%d device pixels (cover scale %.2f)" % (nw, nh, w * scale, h * scale, cover),
        )
        results.check("%s: the card came as WebP" % name, state["format"] == "webp", "format %r" % state["format"])
        # The first paint: no og card cropped to the window, no jump when the card comes.
        frames = cdp.evaluate("window.__frames || []")
        painted = [f for f in frames if f["visible"] and f["nw"] > 0]
        first = painted[0] if painted else None
        results.check(
            "%s: the first image painted has the window's shape" % name,
            first is not None and abs(first["nw"] / first["nh"] - w / h) < 0.05 * (w / h),
            "first painted %s (%sx%s) in %dx%d" % (first and first["src"][:60], first and first["nw"], first and first["nh"], w, h),
        )
        requested = cdp.evaluate(RESOURCES_JS) or []
        results.check(
            "%s: the page never asks for the og card" % name,
            og_image != "" and og_image not in requested,
            "og %r; requested %r" % (og_image, requested[:6]),
        )
        jumps = [f for f in frames if f["rect"] != [0, 0, w, h] or f["share"] != frames[-1]["share"]]
        results.check(
            "%s: no layout jump from the first frame to the card (%d frames recorded)" % (name, len(frames)),
            frames != [] and not jumps,
            "moved: %r" % jumps[:2],
        )
        share = state["shareRect"] or [0, 0]
        results.check("%s: Share is at least 44x44" % name, share[0] >= 44 and share[1] >= 44, "share %r" % share)
        shot = cdp.call("Page.captureScreenshot", {"format": "png"})
        with open(os.path.join(SHOTS, name + ".png"), "wb") as file:
            file.write(base64.b64decode(shot["data"]))
        before = state["loads"]
        cdp.click(w / 2, h / 2)
        ok, state = cdp.wait_until(lambda s: s["loads"] > before and s["paintedAt"] > s["tappedAt"] > 0, deadline.left(20))
        delay = state["paintedAt"] - state["tappedAt"]
        results.check(
            "%s: a tap shows the prefetched card within 100 ms (%.0f ms)" % (name, delay),
            ok and delay < 100,
            "%.0f ms from the click to the frame after the swap; %s" % (delay, describe(state)),
        )

    # The Share label over the brightest photo (yellow-flower.jpg, the tenth: quote 9), on a phone
    # and on a desktop.
    for width, height, scale in (VIEWPORTS[0], VIEWPORTS[2]):
        name = "%dx%d@%d" % (width, height, scale)
        cdp.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": scale, "mobile": width < 800},
        )
        cdp.call("Page.navigate", {"url": base + "/q/9"})
        ok, state = cdp.wait_until(lambda s: s["complete"] and s["loads"] >= 1 and s["prefetched"], deadline.left(30))
        if not results.check("%s: quote 9 over yellow-flower.jpg loads" % name, ok, describe(state)):
            continue
        ratio, label, background = share_contrast(cdp)
        results.check(
            "%s: Share's label is at least 4.5:1 against its own background over the yellow photo (%.1f:1)"
            % (name, ratio),
            ratio >= 4.5,
            "label luminance %.3f, brightest background %.3f" % (label, background),
        )
        shot = cdp.call("Page.captureScreenshot", {"format": "png"})
        with open(os.path.join(SHOTS, name + "-yellow.png"), "wb") as file:
            file.write(base64.b64decode(shot["data"]))

    # 4. At 1440x900: the keyboard, Share, the favicon.
    cdp.call("Emulation.setDeviceMetricsOverride", {"width": 1440, "height": 900, "deviceScaleFactor": 1, "mobile": False})
    cdp.call("Page.navigate", {"url": base + "/"})
    ok, state = cdp.wait_until(lambda s: s["complete"] and s["loads"] >= 1 and s["prefetched"], deadline.left(20))
    results.check(
        "the alt text is the share message, with an em dash",
        state["alt"] != "" and " \u2014 " in state["alt"] and state["alt"] == state["shareMessage"],
        "alt %r, shareMessage %r" % (state["alt"], state["shareMessage"]),
    )
    before = state["loads"]
    focused = cdp.evaluate(FOCUS_CARD_JS)
    cdp.press(" ", "Space", 32, text=" ")
    ok, state = cdp.wait_until(lambda s: s["loads"] > before and s["complete"], deadline.left(20))
    results.check("the space bar brings a new card", focused and ok, "card focused %r; %s" % (focused, describe(state)))

    before = state["loads"]
    cdp.evaluate(FOCUS_CARD_JS)
    cdp.press("Enter", "Enter", 13, text="\r")
    ok, state = cdp.wait_until(lambda s: s["loads"] > before and s["complete"], deadline.left(20))
    results.check("Enter on the focused card brings a new card", ok, describe(state))

    cdp.evaluate(FOCUS_CARD_JS)
    cdp.press("Tab", "Tab", 9)
    ok, state = cdp.wait_until(lambda s: s["shareFocused"], deadline.left(3))
    results.check("Tab from the card reaches the Share button", ok, "focused: %r" % state["activeElement"])

    # Share: headless Chromium has no Web Share API, so the page copies the link and says so.
    loads_before = state["loads"]
    cdp.evaluate(CLEAR_LIVE_JS)
    x, y = cdp.evaluate(SHARE_CENTRE_JS)
    cdp.click(x, y)
    ok, state = cdp.wait_until(lambda s: s["liveText"] == "Link copied", deadline.left(5))
    results.check("a click on Share says Link copied", ok, "live region %r" % state["liveText"])
    time.sleep(deadline.left(0.5))
    state = cdp.evaluate(STATE_JS)
    results.check(
        "Share does not bring a new card", state["loads"] == loads_before, "loads %d -> %d" % (loads_before, state["loads"])
    )
    results.check(
        "Share links the quote's page",
        re.fullmatch(re.escape(base) + r"/q/\d+", state["pageURL"]) is not None,
        "page URL %r" % state["pageURL"],
    )
    clip = cdp.evaluate(READ_CLIPBOARD_JS)
    if clip and clip.get("ok"):
        results.check(
            "the clipboard holds the share message and the quote page's absolute URL",
            state["shareMessage"] != "" and clip["text"] == state["shareMessage"] + " " + state["pageURL"],
            "clipboard %r" % clip["text"],
        )
    else:
        results.info("the clipboard is not readable here (%s); its content is not checked" % (clip or {}).get("text"))
    try:
        with urllib.request.urlopen(base + "/favicon.ico", timeout=deadline.left(5)) as response:
            favicon = response.status == 200 and response.headers.get("Content-Type") == "image/x-icon"
    except Exception:  # noqa: BLE001 - reported as a failed check
        favicon = False
    results.check("the favicon answers", favicon)


def run_checks(run, budget_seconds, description):
    """Runs `run(args, results, deadline, children)` against `--binary`, then stops what it
    started (in `children`: the browser, the server, a page server, a profile folder), prints the
    tally and returns the exit status. Shared by this test and cors_test.py."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--binary", required=True, help="the innerpeace executable, e.g. .build/debug/innerpeace")
    args = parser.parse_args()

    results = Results()
    deadline = Deadline(budget_seconds)
    children = {}
    try:
        run(args, results, deadline, children)
    except Exception as error:  # noqa: BLE001 - any surprise is one failed check, with its context
        results.check("the test runs to the end", False, "%s: %s" % (type(error).__name__, error))
    finally:
        cdp = children.get("cdp")
        if results.failed:
            for line in list(cdp.log) if cdp else []:
                print("  browser: %s" % line)
            for line in list(children["server_out"].tail) if "server_out" in children else []:
                print("  server: %s" % line)
        if cdp:
            try:
                cdp.call("Browser.close", browser=True, timeout=3)
            except Exception:  # noqa: BLE001 - it is stopped below anyway
                pass
            cdp.close()
        stop(children.get("browser"), group=True, grace=5)
        stop(children.get("server"), group=False, grace=10)
        if "page" in children:
            children["page"].shutdown()
        if "profile" in children:
            shutil.rmtree(children["profile"], ignore_errors=True)
    print("%d passed, %d failed" % (results.passed, results.failed))
    return 1 if results.failed else 0


def main():
    return run_checks(run, BUDGET_SECONDS, __doc__.splitlines()[0])

if __name__ == "__main__":
    sys.exit(main())
