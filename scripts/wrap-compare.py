#!/usr/bin/env python3
"""Line breaking against Chromium's CSS text-wrap: innerpeace's lines beside headless Chromium's.

Asks `innerpeace-bench lines` for the size, wrap width and lines innerpeace sets every catalog
quote with at og, square, story and classic; then sets each prose quote (verse, text holding its
own line breaks, is left out, and so is a truncated quote) in headless Chromium with the bundled
font (Fonts/EBGaramond12-Italic.otf, embedded as a data: URL, italic) at the same size and width,
once with `text-wrap: wrap` (greedy, for reference: it should give innerpeace's own lines),
`pretty` and `balance`, and reads the lines back (a Range per word, grouped by the top of its
client rects). innerpeace's own lines are set in Chromium too, with explicit <br>, so every
line width is measured by one engine.

For each mode it counts, among paragraphs of two lines or more: paragraphs that end on one word,
paragraphs whose last line is under a quarter of the longest line's width, one-word lines
inside the paragraph (any line but the last), paragraphs whose first line holds one word, and
lines (but the last) that end on a one-letter word ("a", "I"); and, over all lines, the median
and 10th percentile of the characters a line holds. Prints a markdown table per preset and
overall.

    python3 scripts/wrap-compare.py --binary .build/release/innerpeace-bench [--chromium chromium]
        [--preset og ...] [--json OUT.json] [--details]

Builds nothing; loopback and file:// only (the page is a local file, the font a data: URL).
"""
import argparse
import base64
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRESETS = ["og", "square", "story", "classic"]
MODES = ["innerpeace", "wrap", "pretty", "balance"]

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><style>
@font-face { font-family: "IPGaramond"; src: url(data:font/otf;base64,__FONT__) format("opentype");
  font-style: italic; font-weight: 400; }
body { margin: 0; }
.p { font-family: "IPGaramond", monospace; font-style: italic; font-weight: 400; line-height: 1.3;
  text-align: left; hyphens: manual; overflow-wrap: break-word; font-kerning: normal;
  white-space: normal; margin: 0 0 20px 0; padding: 0; }
.ip { white-space: nowrap; }
#probe { font-size: 100px; white-space: nowrap; position: absolute; }
</style></head><body>
<span id="probe" class="p"></span><span id="fallback" style="font: italic 100px monospace; white-space: nowrap"></span>
<div id="cases"></div>
<pre id="result"></pre>
<script id="data" type="application/json">__DATA__</script>
<script>
const PROBE = "Quiet minds, soft hearts: the wise sea of WAVES.";

function wordRects(node, start, end) {
  const range = document.createRange();
  range.setStart(node, start);
  range.setEnd(node, end);
  return Array.from(range.getClientRects()).filter(r => r.width > 0 || r.height > 0);
}

// Every word in the element, with the line (top) it sits on and its left and right edges. A word
// that Chromium broke across lines (overflow-wrap) is split into its pieces, character by character.
function pieces(element) {
  const out = [];
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    const text = node.data;
    const re = /\\S+/g;
    let match;
    while ((match = re.exec(text))) {
      const start = match.index, end = start + match[0].length;
      const rects = wordRects(node, start, end);
      const tops = new Set(rects.map(r => Math.round(r.top)));
      if (tops.size <= 1 && rects.length > 0) {
        out.push({ text: match[0], top: rects[0].top,
                   left: Math.min(...rects.map(r => r.left)), right: Math.max(...rects.map(r => r.right)) });
        continue;
      }
      let current = null;
      for (let i = start; i < end; i++) {
        // Keep surrogate pairs together.
        const code = text.charCodeAt(i);
        const step = code >= 0xD800 && code <= 0xDBFF && i + 1 < end ? 2 : 1;
        const r = wordRects(node, i, i + step);
        if (r.length === 0) { i += step - 1; continue; }
        const top = r[0].top;
        if (current && Math.abs(current.top - top) < 1) {
          current.text += text.slice(i, i + step);
          current.right = Math.max(current.right, r[0].right);
        } else {
          if (current) { current.split = true; out.push(current); }
          current = { text: text.slice(i, i + step), top, left: r[0].left, right: r[0].right };
        }
        i += step - 1;
      }
      if (current) out.push(current);
    }
  }
  return out;
}

// Groups the pieces into lines by their top edge.
function lines(element) {
  const result = [];
  for (const piece of pieces(element)) {
    let line = result.find(l => Math.abs(l.top - piece.top) < 2);
    if (!line) { line = { top: piece.top, words: [], left: piece.left, right: piece.right }; result.push(line); }
    line.words.push(piece.text);
    line.left = Math.min(line.left, piece.left);
    line.right = Math.max(line.right, piece.right);
  }
  result.sort((a, b) => a.top - b.top);
  return result.map(l => ({ text: l.words.join(" "), words: l.words.length,
                            width: Math.round((l.right - l.left) * 100) / 100 }));
}

async function main() {
  const data = JSON.parse(document.getElementById("data").textContent);
  await document.fonts.load('italic 100px "IPGaramond"', PROBE);
  await document.fonts.ready;
  const probe = document.getElementById("probe"), fallback = document.getElementById("fallback");
  probe.textContent = PROBE;
  fallback.textContent = PROBE;
  const font = { loaded: document.fonts.check('italic 100px "IPGaramond"', PROBE),
                 probeWidth: probe.getBoundingClientRect().width,
                 fallbackWidth: fallback.getBoundingClientRect().width,
                 userAgent: navigator.userAgent };
  const cases = document.getElementById("cases");
  // Every paragraph in every mode goes into the page first, so Chromium lays them all out once.
  const placed = [];
  for (const item of data) {
    for (const mode of ["wrap", "pretty", "balance", "innerpeace"]) {
      const div = document.createElement("div");
      div.className = mode === "innerpeace" ? "p ip" : "p";
      div.style.fontSize = item.size + "px";
      div.style.width = item.width + "px";
      if (mode === "innerpeace") {
        item.lines.forEach((line, i) => {
          if (i > 0) div.appendChild(document.createElement("br"));
          div.appendChild(document.createTextNode(line));
        });
      } else {
        div.style.textWrap = mode;
        div.textContent = item.text;
      }
      cases.appendChild(div);
      placed.push({ key: item.key, mode, div });
    }
  }
  const out = [];
  const byKey = new Map();
  for (const { key, mode, div } of placed) {
    if (!byKey.has(key)) { const entry = { key, modes: {} }; byKey.set(key, entry); out.push(entry); }
    byKey.get(key).modes[mode] = lines(div);
  }
  cases.remove();
  const json = JSON.stringify({ font, results: out });
  document.getElementById("result").textContent = btoa(unescape(encodeURIComponent(json)));
}
main().catch(e => { document.getElementById("result").textContent = "ERROR " + e; });
</script></body></html>
"""


def is_word(token):
    """A token counts as a word if it holds a letter or a digit (a lone dash does not)."""
    return any(c.isalnum() for c in token)


def word_count(text):
    return sum(1 for token in text.split() if is_word(token))


def broken_words(text, lines):
    """How many line ends fall inside a word: between two letters or digits that the source text
    does not separate with whitespace (a break after a hyphen, a dash or a slash is not counted)."""
    chars = []  # (character, whether whitespace precedes it in the source)
    space = False
    for c in text:
        if c.isspace() or c in "\u2028\u2029":
            space = True
        else:
            chars.append((c, space))
            space = False
    position = broken = 0
    for number, line in enumerate(lines):
        length = sum(1 for c in line["text"] if not (c.isspace() or c in "\u2028\u2029"))
        position += length
        if number < len(lines) - 1 and 0 < position < len(chars):
            if not chars[position][1] and chars[position - 1][0].isalnum() and chars[position][0].isalnum():
                broken += 1
    return broken


def ends_on_one_letter(text):
    """Whether a line of more than one word ends on a one-letter word ("a", "I")."""
    tokens = text.split()
    return len(tokens) > 1 and len(tokens[-1]) == 1 and tokens[-1].isalpha()


def percentile(values, share):
    """The nearest-rank percentile (share in 0...1); 0 for no values."""
    ordered = sorted(values)
    if not ordered:
        return 0
    return ordered[max(1, math.ceil(len(ordered) * share)) - 1]


def score(lines, text):
    """The stranding figures for one paragraph's lines (each with text and width)."""
    multi = len(lines) >= 2
    longest = max((line["width"] for line in lines), default=0)
    last = lines[-1] if lines else {"text": "", "width": 0}
    inner = [line for line in lines[:-1] if word_count(line["text"]) == 1] if multi else []
    return {
        "lines": len(lines),
        "multi": multi,
        "ends_one_word": multi and word_count(last["text"]) == 1,
        "short_last": multi and longest > 0 and last["width"] < 0.25 * longest,
        "inner_one_word": len(inner),
        "last_ratio": (last["width"] / longest) if multi and longest > 0 else 1.0,
        "broken_words": broken_words(text, lines),
        "first_one_word": multi and word_count(lines[0]["text"]) == 1,
        "one_letter_ends": sum(1 for line in lines[:-1] if ends_on_one_letter(line["text"])),
        "lengths": [len(line["text"].strip()) for line in lines],
    }


def run_chromium(chromium, page_path, budget_ms, timeout):
    profile = tempfile.mkdtemp(prefix="wrap-compare-profile-")
    try:
        command = [
            chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
            "--disable-background-networking", "--disable-sync", "--disable-component-update",
            "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={profile}",
            f"--virtual-time-budget={budget_ms}", "--dump-dom", "file://" + page_path,
        ]
        completed = subprocess.run(command, capture_output=True, timeout=timeout)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    dom = completed.stdout.decode("utf-8", "replace")
    match = re.search(r'<pre id="result">([^<]*)</pre>', dom)
    if not match or not match.group(1) or match.group(1).startswith("ERROR"):
        detail = match.group(1) if match else completed.stderr.decode("utf-8", "replace")[-2000:]
        sys.exit(f"wrap-compare: Chromium returned no result: {detail}")
    return json.loads(base64.b64decode(match.group(1)).decode("utf-8"))


def table(rows, title):
    """rows: {mode: [score, ...]} -> markdown lines."""
    out = [f"**{title}**", "",
           "| mode | paragraphs (2+ lines) | lines | ends on one word | last line < 1/4 of longest "
           "| one-word inner lines (paragraphs) | one-word first lines | lines ending on a one-letter word "
           "| words broken | median last/longest | characters a line: median | 10th percentile |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for mode in MODES:
        scores = rows.get(mode, [])
        multi = [s for s in scores if s["multi"]]
        ratios = sorted(s["last_ratio"] for s in multi)
        median = ratios[len(ratios) // 2] if ratios else 0
        inner_lines = sum(s["inner_one_word"] for s in multi)
        inner_paragraphs = sum(1 for s in multi if s["inner_one_word"])
        lengths = sorted(n for s in scores for n in s["lengths"])
        middle = len(lengths) // 2
        length_median = (0 if not lengths else lengths[middle] if len(lengths) % 2
                         else (lengths[middle - 1] + lengths[middle]) / 2)
        out.append(
            f"| {mode} | {len(multi)} | {sum(s['lines'] for s in scores)} | "
            f"{sum(1 for s in multi if s['ends_one_word'])} | {sum(1 for s in multi if s['short_last'])} | "
            f"{inner_lines} ({inner_paragraphs}) | {sum(1 for s in multi if s['first_one_word'])} | "
            f"{sum(s['one_letter_ends'] for s in scores)} | {sum(s['broken_words'] for s in scores)} | {median:.2f} | "
            f"{length_median:.1f} | {percentile(lengths, 0.10)} |")
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/release/innerpeace-bench"),
                        help="innerpeace-bench to ask for the lines (built beforehand)")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    parser.add_argument("--preset", action="append", help="og, square, story, classic (repeatable; default all four)")
    parser.add_argument("--catalog", help="catalog folder (default: the bundled one)")
    parser.add_argument("--font", default=os.path.join(ROOT, "Fonts/EBGaramond12-Italic.otf"))
    parser.add_argument("--json", help="write every paragraph's lines in every mode here")
    parser.add_argument("--details", action="store_true", help="list the stranded paragraphs")
    parser.add_argument("--width", choices=["chosen", "available"], default="chosen",
                        help="set Chromium's paragraphs at innerpeace's wrap width (chosen; a balanced paragraph "
                        "is narrowed) or at the widest wrap innerpeace's fitter allows at that size (available: "
                        "the bounds less the italic overhang allowance, 0.12 of the size, as FitMeasure.overhang)")
    parser.add_argument("--timeout", type=float, default=110, help="seconds Chromium may take")
    args = parser.parse_args()
    presets = args.preset or PRESETS
    started = time.monotonic()

    command = [args.binary, "lines"] + [x for p in presets for x in ("--preset", p)]
    if args.catalog:
        command += ["--catalog", args.catalog]
    fitted = json.loads(subprocess.run(command, check=True, capture_output=True).stdout)
    wrapped_authors = [f"{f['preset']}/{f['quote']}" for f in fitted if len(f.get("authorLines", [])) > 1]
    prose = [f for f in fitted if not f["verse"] and not f["truncated"]]
    skipped = len(fitted) - len(prose)
    for f in prose:
        f["chromiumWidth"] = (f["wrapWidth"] if args.width == "chosen"
                              else max(f["wrapWidth"], f["boundsWidth"] - math.ceil(f["size"] * 0.12)))
    items = [{"key": f"{f['preset']}/{f['quote']}", "size": f["size"], "width": f["chromiumWidth"],
              "text": f["text"], "lines": f["lines"]} for f in prose]

    with open(args.font, "rb") as handle:
        font = base64.b64encode(handle.read()).decode("ascii")
    # "</" cannot appear inside the JSON script element.
    data = json.dumps(items, ensure_ascii=False).replace("</", "<\\/")
    page = PAGE.replace("__FONT__", font).replace("__DATA__", data)
    with tempfile.TemporaryDirectory(prefix="wrap-compare-") as folder:
        page_path = os.path.join(folder, "page.html")
        with open(page_path, "w", encoding="utf-8") as handle:
            handle.write(page)
        chromium_started = time.monotonic()
        result = run_chromium(args.chromium, page_path, budget_ms=60000, timeout=args.timeout)
    chromium_seconds = time.monotonic() - chromium_started

    font_info = result["font"]
    if not font_info["loaded"] or abs(font_info["probeWidth"] - font_info["fallbackWidth"]) < 1:
        sys.exit(f"wrap-compare: the bundled font did not load in Chromium: {font_info}")

    by_key = {f"{f['preset']}/{f['quote']}": f for f in prose}
    scores = {p: {m: [] for m in MODES} for p in presets}
    same_count = same_lines = 0
    # innerpeace's own lines, measured by Chromium, against the width they were wrapped to: a
    # check on the engines' agreement that holds whatever breaker chose the lines.
    overlong, worst = 0, 0.0
    details = []
    for entry in result["results"]:
        fit = by_key[entry["key"]]
        modes = entry["modes"]
        for mode in MODES:
            scores[fit["preset"]][mode].append(score(modes[mode], fit["text"]))
        for line in modes["innerpeace"]:
            excess = line["width"] - fit["wrapWidth"]
            if excess > 0.5 and line["words"] > 1:
                overlong += 1
                worst = max(worst, excess)
        ours = [" ".join(line.split()) for line in fit["lines"]]
        theirs = [line["text"] for line in modes["wrap"]]
        same_count += len(ours) == len(theirs)
        same_lines += ours == theirs
        for mode in MODES:
            s = score(modes[mode], fit["text"])
            if (s["ends_one_word"] or s["short_last"] or s["inner_one_word"] or s["broken_words"]
                    or s["first_one_word"] or s["one_letter_ends"]):
                width = fit["wrapWidth"] if mode == "innerpeace" else fit["chromiumWidth"]
                details.append((mode, entry["key"], fit["size"], width, [l["text"] for l in modes[mode]]))
        if args.json:
            entry.update(size=fit["size"], width=fit["wrapWidth"], chromiumWidth=fit["chromiumWidth"])

    elapsed = time.monotonic() - started
    version = re.search(r"Chrome/([\d.]+)", font_info["userAgent"])
    where = "wrap width" if args.width == "chosen" else "the widest wrap width its fitter allows at that size"
    print(f"Prose quotes set at innerpeace's size and {where}: {len(prose)} paragraphs "
          f"({skipped} verse or truncated left out), Chromium {version.group(1) if version else '?'}, "
          f"font check: bundled face loaded (probe {font_info['probeWidth']:.1f} px, "
          f"fallback {font_info['fallbackWidth']:.1f} px).")
    print(f"Engine agreement, Chromium `wrap` at {args.width} width vs innerpeace's lines: same line count {same_count}/{len(prose)}, "
          f"identical lines {same_lines}/{len(prose)}. {elapsed:.1f} s in all, Chromium {chromium_seconds:.1f} s.")
    print(f"innerpeace's lines of two words or more that Chromium measures wider than their wrap width "
          f"(by over 0.5 px): {overlong}" + (f", by up to {worst:.1f} px." if overlong else "."))
    if same_count < 0.9 * len(prose):
        print("wrap-compare: warning: Chromium's `wrap` and innerpeace differ in line count for over 10 % of the "
              "paragraphs; check the font and the widths before trusting the table", file=sys.stderr)
    print(f"Author lines that wrap (all {len(fitted)} cards, verse included): {len(wrapped_authors)}"
          + (f" ({', '.join(wrapped_authors[:12])}{', ...' if len(wrapped_authors) > 12 else ''})." if wrapped_authors else "."))
    print()
    for preset in presets:
        print("\n".join(table(scores[preset], preset)))
        print()
    overall = {m: [s for p in presets for s in scores[p][m]] for m in MODES}
    print("\n".join(table(overall, "overall")))
    if args.details:
        print()
        for mode, key, size, width, lines in sorted(details):
            print(f"- {mode} {key} ({size} px, {width:.0f} px): " + " / ".join(lines))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(result, handle, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
