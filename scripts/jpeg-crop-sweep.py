#!/usr/bin/env python3
"""Runs scripts/jpeg-crop-harness.c over the catalog's photos (see its comment): every preset,
every zoom of the focus crop (1, 1.15, 1.3) and three placements (left/top, centre, right/bottom),
the part the card shows plus 2 pixels for the scaler's filter, the columns widened by MARGIN.

    clang -O2 scripts/jpeg-crop-harness.c -o /tmp/jpeg-crop-harness -ljpeg -lturbojpeg
    python3 scripts/jpeg-crop-sweep.py [MARGIN] [RUNS]      # defaults 16 and 7

Prints one line per case and, per preset and zoom, the summed CPU ms of the whole decodes over
the partial ones; exit status 1 when any case's bytes differ.
"""
import glob, math, os, subprocess, sys
from fractions import Fraction

from PIL import Image

MARGIN = sys.argv[1] if len(sys.argv) > 1 else "16"
RUNS = sys.argv[2] if len(sys.argv) > 2 else "7"
HARNESS = os.environ.get("HARNESS", "/tmp/jpeg-crop-harness")
PRESETS = {"og": (1200, 630), "classic": (2048, 1536), "square": (1080, 1080), "story": (1080, 1920)}
FACTORS = [Fraction(n, 8) for n in range(1, 9)]  # libjpeg-turbo's scalings at or under 1
FILTER = 2  # pixels the scaler reads beyond the crop

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Resources")
totals, differing = {}, 0
for photo in sorted(glob.glob(os.path.join(root, "*.jpg"))):
    width, height = Image.open(photo).size
    for preset, (canvas_width, canvas_height) in PRESETS.items():
        for zoom in (1, 1.15, 1.3):
            scale = max(canvas_width / width, canvas_height / height) * zoom
            factor = min([f for f in FACTORS if f >= scale], default=Fraction(1))
            decoded = (math.ceil(width * factor), math.ceil(height * factor))
            shown = (min(decoded[0], math.ceil(canvas_width * float(factor) / scale)),
                     min(decoded[1], math.ceil(canvas_height * float(factor) / scale)))
            for place in (0, 0.5, 1):
                x0, y0 = int(place * (decoded[0] - shown[0])), int(place * (decoded[1] - shown[1]))
                x, y = max(0, x0 - FILTER), max(0, y0 - FILTER)
                columns = min(decoded[0], x0 + shown[0] + FILTER) - x
                rows = min(decoded[1], y0 + shown[1] + FILTER) - y
                result = subprocess.run(
                    [HARNESS, photo, str(factor.numerator), str(factor.denominator), str(y), str(rows), RUNS,
                     str(x), str(columns), MARGIN], capture_output=True, text=True)
                line = result.stdout.strip()
                print(os.path.basename(photo), preset, zoom, place, line.split(": ", 1)[-1], flush=True)
                differing += result.returncode != 0
                whole = float(line.split("whole ")[1].split(" ms")[0])
                part = float(line.split("part ")[1].split(" ms")[0])
                key = (preset, zoom)
                totals[key] = (totals.get(key, (0, 0))[0] + whole, totals.get(key, (0, 0))[1] + part)
for (preset, zoom), (whole, part) in totals.items():
    print(f"{preset:8} zoom {zoom:<5} whole {whole:7.1f} ms  part {part:7.1f} ms  {whole / part:.2f}x")
print(f"{differing} cases differ" if differing else "every case: the same bytes")
sys.exit(1 if differing else 0)
