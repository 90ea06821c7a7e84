#!/usr/bin/env python3
"""The PNG and WebP encoders' files in other decoders: every catalog photo at every preset, and a
transparent card at every preset, rendered by `innerpeace render` as PNG (or WebP), then read by

- pngcheck (every chunk, CRC and the zlib stream; exit status 0 and "OK"), for PNG,
- Pillow (size and mode; the pixels are the reference for the browser),
- headless Chromium: each file, served from a loopback HTTP server to a page of the same origin,
  decoded by `<img>`, drawn on a canvas and read back; the page posts each image's natural size and
  a checksum of its pixels (RGBA of opaque pixels, alpha alone of the others, as the canvas keeps
  partly transparent colours premultiplied), which must equal Pillow's. A lossy WebP decodes to the
  same pixels in both: they share libwebp's decoder and its conversion to RGB.

        python3 Tests/decoders/decoders_test.py --binary .build/debug/innerpeace [--format webp]

Needs pngcheck, Pillow and numpy (python3-pil, python3-numpy) and chromium on PATH. Bounded: renders stop after
RENDER_SECONDS, the browser gets BROWSER_SECONDS. Prints one line per check and ends with
`N passed, M failed`; exits 1 if any check failed.
"""

import argparse
import concurrent.futures
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support"))
from testkit import Results, free_port  # noqa: E402

try:
    import numpy
    from PIL import Image
except ImportError:
    print("decoders_test: needs Pillow and numpy (apt install python3-pil python3-numpy)", file=sys.stderr)
    print("0 passed, 1 failed")
    sys.exit(1)

PRESETS = ["og", "classic", "square", "story"]
RENDER_SECONDS = 75.0
BROWSER_SECONDS = 40.0
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PAGE = """<!doctype html><meta charset="utf-8"><body><script>
(async () => {
  const names = %s;
  const results = {};
  for (const name of names) {
    const image = new Image();
    image.src = name;
    try {
      await image.decode();
      const canvas = document.createElement("canvas");
      canvas.width = image.naturalWidth;
      canvas.height = image.naturalHeight;
      const context = canvas.getContext("2d", {colorSpace: "srgb"});
      context.drawImage(image, 0, 0);
      const data = context.getImageData(0, 0, canvas.width, canvas.height).data;
      // Weighted sums (exact in doubles): colours of opaque pixels, alpha of the others.
      let colours = 0, alphas = 0;
      for (let i = 0, n = 0; i < data.length; i += 4, n++) {
        const weight = (n %% 251) + 1;
        if (data[i + 3] === 255) colours += (data[i] + 3 * data[i + 1] + 7 * data[i + 2]) * weight;
        else alphas += data[i + 3] * weight;
      }
      results[name] = [image.naturalWidth, image.naturalHeight, colours, alphas];
    } catch (error) {
      results[name] = String(error);
    }
  }
  await fetch("/results", {method: "POST", body: JSON.stringify(results)});
})();
</script>"""


def checksum(image):
    """The page's sums of the same pixels, from Pillow's RGBA."""
    pixels = numpy.asarray(image.convert("RGBA"), dtype=numpy.int64).reshape(-1, 4)
    weights = numpy.arange(len(pixels), dtype=numpy.int64) % 251 + 1
    opaque = pixels[:, 3] == 255
    colours = (pixels[:, 0] + 3 * pixels[:, 1] + 7 * pixels[:, 2]) * weights
    alphas = pixels[:, 3] * weights
    return [int(colours[opaque].sum()), int(alphas[~opaque].sum())]


def render(binary, folder, preset, picture, extension):
    name = "%s-%s.%s" % (preset, picture.replace(".jpg", "") if picture else "transparent", extension)
    command = [binary, "render", "--preset", preset, "--seed", "7", "--out", os.path.join(folder, name)]
    command += ["--picture", picture] if picture else ["--transparent"]
    completed = subprocess.run(command, capture_output=True, timeout=RENDER_SECONDS)
    return name, completed.returncode, completed.stderr.decode("utf-8", "replace").strip()


def serve(folder, received):
    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=folder, **kwargs)

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            received["results"] = json.loads(body)
            self.send_response(204)
            self.end_headers()
            received["done"].set()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/debug/innerpeace"))
    parser.add_argument("--format", choices=["png", "webp"], default="png")
    arguments = parser.parse_args()
    results = Results()
    with open(os.path.join(ROOT, "Resources/pictures.json")) as file:
        pictures = [entry["file"] for entry in json.load(file)]
    folder = tempfile.mkdtemp(prefix="innerpeace-%s-" % arguments.format)
    try:
        jobs = [(preset, picture) for preset in PRESETS for picture in pictures + [None]]
        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            rendered = list(pool.map(lambda job: render(arguments.binary, folder, *job, arguments.format), jobs))
        results.info("%d cards rendered in %.1f s" % (len(rendered), time.monotonic() - started))
        names = []
        expected = {}
        for name, status, error in rendered:
            if not results.check("render %s" % name, status == 0, error):
                continue
            path = os.path.join(folder, name)
            if arguments.format == "png":
                check = subprocess.run(["pngcheck", path], capture_output=True, timeout=30)
                output = check.stdout.decode("utf-8", "replace").strip()
                results.check("pngcheck %s" % name, check.returncode == 0 and "OK" in output, output)
            with Image.open(path) as image:
                image.load()
                transparent = "-transparent." in name
                results.check(
                    "Pillow reads %s" % name,
                    image.mode == ("RGBA" if transparent else "RGB"),
                    "mode %s" % image.mode,
                )
                expected[name] = [image.width, image.height] + checksum(image)
            names.append(name)
        with open(os.path.join(folder, "index.html"), "w") as file:
            file.write(PAGE % json.dumps(names))
        received = {"done": threading.Event()}
        server = serve(folder, received)
        profile = tempfile.mkdtemp(prefix="innerpeace-%s-chromium-" % arguments.format)
        browser = shutil.which("chromium") or shutil.which("chromium-browser")
        chromium = subprocess.Popen(
            [
                browser, "--headless", "--no-sandbox", "--disable-gpu", "--force-color-profile=srgb",
                "--user-data-dir=" + profile, "--no-first-run",
                "http://127.0.0.1:%d/index.html" % server.server_address[1],
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            finished = received["done"].wait(BROWSER_SECONDS)
            results.check("Chromium decoded every card within %d s" % BROWSER_SECONDS, finished)
            seen = received.get("results", {})
            for name in names:
                results.check(
                    "Chromium's pixels of %s are Pillow's" % name,
                    seen.get(name) == expected[name],
                    "Chromium %s, Pillow %s" % (seen.get(name), expected[name]),
                )
        finally:
            chromium.terminate()
            try:
                chromium.wait(10)
            except subprocess.TimeoutExpired:
                chromium.kill()
                chromium.wait(10)
            server.shutdown()
            shutil.rmtree(profile, ignore_errors=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return results.summary()


if __name__ == "__main__":
    sys.exit(main())
