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
        [--preset og ...] [--json OUT.json] [--details] [--language latin|ja|zh]

With `--language ja` it does the same for Japanese: the 35 sentences in JAPANESE below (or
--catalog's quotes), at og, square and story unless --preset says, in Noto Serif CJK JP (the face
`fc-match` gives, subset with fontTools and embedded; Latin letters in the bundled italic, as
innerpeace sets them), `lang="ja"`, against Chromium's `word-break: normal` and `auto-phrase`,
`text-wrap: pretty` and `balance`, and auto-phrase with each; it counts line ends inside a phrase
(Python budoux's phrases; a break at a space is not inside one), lines starting with a closing
mark or ending with an opening bracket (kinsoku), paragraphs ending on one phrase or on a last
line under a quarter of the longest, the median last/longest and the characters a line (median,
10th percentile). `--language zh` does Simplified Chinese (CHINESE below, Noto Serif CJK SC,
no auto-phrase: Chromium's is Japanese only). Needs `pip install budoux fonttools`.

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
<html lang="__LANG__"><head><meta charset="utf-8"><style>
@font-face { font-family: "IPGaramond"; src: url(data:font/otf;base64,__FONT__) format("opentype");
  font-style: italic; font-weight: 400;__RANGE__ }
__EXTRA_FACES__
body { margin: 0; }
.p { font-family: __FAMILIES__; font-style: italic; font-weight: 400; line-height: 1.3;
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
const CHECK_FAMILY = "__CHECK_FAMILY__", CHECK_PROBE = "__CHECK_PROBE__";
const MODES = __MODES__;

function wordRects(node, start, end) {
  const range = document.createRange();
  range.setStart(node, start);
  range.setEnd(node, end);
  return Array.from(range.getClientRects()).filter(r => r.width > 0 || r.height > 0);
}

// Every word in the element, with the line (top) it sits on and its left and right edges. A word
// that Chromium broke across lines (overflow-wrap) is split into its pieces, character by character.
function pieces(element, tolerance) {
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
        if (current && Math.abs(current.top - top) < (tolerance || 1)) {
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
// tolerance: how far apart two pieces' tops may be on one line (2 px unless given; a line mixing
// two faces, as Japanese with Latin words, needs more, since each face's box has its own top).
function lines(element, tolerance) {
  const result = [];
  for (const piece of pieces(element, tolerance)) {
    let line = result.find(l => Math.abs(l.top - piece.top) < (tolerance || 2));
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
  if (CHECK_FAMILY) await document.fonts.load('italic 100px "' + CHECK_FAMILY + '"', CHECK_PROBE);
  await document.fonts.ready;
  const probe = document.getElementById("probe"), fallback = document.getElementById("fallback");
  probe.textContent = PROBE;
  fallback.textContent = PROBE;
  const font = { loaded: document.fonts.check('italic 100px "IPGaramond"', PROBE),
                 probeWidth: probe.getBoundingClientRect().width,
                 fallbackWidth: fallback.getBoundingClientRect().width,
                 userAgent: navigator.userAgent,
                 faces: Array.from(document.fonts).map(f => f.family + ":" + f.status) };
  const cases = document.getElementById("cases");
  // Every paragraph in every mode goes into the page first, so Chromium lays them all out once.
  const placed = [];
  for (const item of data) {
    for (const mode of MODES.map(m => m.name).concat(["innerpeace"])) {
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
        Object.assign(div.style, MODES.find(m => m.name === mode).style);
        div.textContent = item.text;
      }
      cases.appendChild(div);
      placed.push({ key: item.key, mode, div, tolerance: item.tolerance });
    }
  }
  const out = [];
  const byKey = new Map();
  for (const { key, mode, div, tolerance } of placed) {
    if (!byKey.has(key)) { const entry = { key, modes: {} }; byKey.set(key, entry); out.push(entry); }
    byKey.get(key).modes[mode] = lines(div, tolerance);
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


def fill_page(font, data, lang, families, modes, font_range="", extra_faces="", check_family="",
              check_probe=""):
    """The page with its placeholders filled (the data last: it is the only part from quotes)."""
    page = (PAGE.replace("__FONT__", font).replace("__RANGE__", font_range).replace("__EXTRA_FACES__", extra_faces)
            .replace("__FAMILIES__", families).replace("__LANG__", lang).replace("__CHECK_FAMILY__", check_family)
            .replace("__CHECK_PROBE__", check_probe).replace("__MODES__", json.dumps(modes)))
    return page.replace("__DATA__", data)


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


def shared_columns(scores):
    """The columns every table has: the paragraphs of two lines or more, their median last/longest
    ratio, every line's length (sorted) and the median length."""
    multi = [s for s in scores if s["multi"]]
    ratios = sorted(s["last_ratio"] for s in multi)
    median = ratios[len(ratios) // 2] if ratios else 0
    lengths = sorted(n for s in scores for n in s["lengths"])
    middle = len(lengths) // 2
    length_median = (0 if not lengths else lengths[middle] if len(lengths) % 2
                     else (lengths[middle - 1] + lengths[middle]) / 2)
    return multi, median, lengths, length_median


def table(rows, title):
    """rows: {mode: [score, ...]} -> markdown lines."""
    out = [f"**{title}**", "",
           "| mode | paragraphs (2+ lines) | lines | ends on one word | last line < 1/4 of longest "
           "| one-word inner lines (paragraphs) | one-word first lines | lines ending on a one-letter word "
           "| words broken | median last/longest | characters a line: median | 10th percentile |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for mode in MODES:
        scores = rows.get(mode, [])
        multi, median, lengths, length_median = shared_columns(scores)
        inner_lines = sum(s["inner_one_word"] for s in multi)
        inner_paragraphs = sum(1 for s in multi if s["inner_one_word"])
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
    parser.add_argument("--language", choices=["latin", "ja", "zh"], default="latin",
                        help="latin: the catalog's quotes (default); ja / zh: the Japanese / Simplified Chinese "
                        "sentences below (or --catalog's), set in Noto Serif CJK JP / SC, against Chromium's "
                        "word-break: normal and auto-phrase, text-wrap: pretty and balance")
    args = parser.parse_args()
    if args.language != "latin":
        return main_cjk(args)
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
    page = fill_page(font, data, lang="en", families='"IPGaramond", monospace',
                     modes=[{"name": m, "style": {"textWrap": m}} for m in MODES if m != "innerpeace"])
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


# Card-length Japanese prose, written for this comparison (calm, quote-like; 15 to 80 characters,
# some with Latin words or figures).
JAPANESE = """静かな心は、どんな嵐の中でも小さな灯をともし続ける。
急がなくていい。花は自分の季節を知っている。
今日という日は、二度と来ない贈り物です。
雨の音に耳を澄ませば、心の中のざわめきも少しずつ遠のいていく。
一歩ずつでいい、歩みを止めなければ、いつか山の頂に立てる。
水は器に従い、形を変えても、その本質を失わない。
朝の光は、昨日の悲しみを責めずに、ただ窓辺を照らす。
小さな親切は、大きな言葉よりも長く人の心に残るものだ。
風に逆らわず、風を読む人が遠くまで帆を進める。
月は満ちても欠けても、同じ月である。
「ありがとう」の一言が、冷えた部屋をあたためることがある。
深呼吸をひとつ。それだけで世界は少し広くなる。
木は百年かけて育ち、その影で旅人を休ませる。
本を一冊読み終えるたびに、心の中に新しい窓がひとつ開く。
Life is simple という言葉を、今日は信じてみたい。
毎朝5分だけ、何もせずに空を見上げる時間をつくろう。
失敗は終わりではなく、次の道を照らす小さなランプだ。
海は何も語らないが、波の音がすべてを教えてくれる。
心が疲れたときは、温かいお茶を一杯、ゆっくりと味わえばいい。
昨日より今日、今日より明日、ほんの少しだけやさしくなれたら、それで十分だ。
雪は音もなく降り積もり、やがて春の川となって野を潤す。
人と比べるのをやめたとき、自分だけの景色が見えてくる。
「また明日」と言える人がいることは、何よりの幸せである。
石の上にも三年。待つことを知る人は、実りの時も知っている。
星の光は、何千年もの旅をして、今夜あなたの目に届いている。
静けさの中でしか聞こえない声が、誰の胸の奥にもある。
2つの手は、誰かを支えるためにも、自分を抱きしめるためにもある。
花を見て美しいと感じる心こそ、いちばん美しい花なのかもしれない。
道に迷ったら、最初に歩き出した日のことを思い出そう。
笑顔は、言葉の通じない国でも通じる、世界共通のあいさつだ。
夕暮れの空は、一日をよく生きた人への静かな拍手のようだ。
焦らず、比べず、諦めず。今日の自分にできることを、ひとつだけ丁寧にやってみる。
人生は長い旅のようなもので、急いで駆け抜ける人には見えない花が、道端にたくさん咲いている。だから時には立ち止まろう。
1日に10ページずつ読めば、1年で3650ページになる。小さな積み重ねは、いつか大きな山になる。
森の中を歩くと、木々のあいだを抜ける風が、忘れていた大切なことをそっと思い出させてくれる。""".split("\n")

# Simplified Chinese, likewise (Chromium's auto-phrase is Japanese only, so it is left out for zh).
CHINESE = """安静的心，像深夜的湖水，照见满天的星光。
不必着急，花朵知道自己开放的季节。
今天是一份礼物，它不会再来第二次。
一步一步地走，只要不停下来，终会到达山顶。
水随器而方圆，却从不失去自己的本性。
小小的善意，往往比华丽的言辞更久地留在人心里。
听雨的时候，心里的喧嚣也慢慢地远去了。
每天早上花5分钟看看天空，什么也不做。
失败不是终点，而是照亮下一段路的一盏小灯。
不与人比较的时候，才能看见只属于自己的风景。
星光走了几千年的路，今夜才落进你的眼睛里。
笑容是一种不需要翻译的语言，在世界的每个角落都能听懂。
树用一百年长大，然后用它的树荫让路人歇息。
累了的时候，就泡一杯热茶，慢慢地品尝吧。
读完一本书，心里就多开了一扇新的窗户。
雪无声地落下，春天来临时化作河流，滋润着田野。""".split("\n")

CLOSING = set("、。，．,.!?！？：；:;」』）)］】〕〉》〙〗｝}〟’”ー…‥・ゝゞ々ぁぃぅぇぉっゃゅょゎゕゖァィゥェォッャュョヮヵヶㇰㇱㇲㇳㇴㇵㇶㇷㇸㇹㇺㇻㇼㇽㇾㇿ")
OPENING = set("「『（(［【〔〈《〘〖｛{〝‘“")


def cjk_phrase_boundaries(parser, text):
    """The places a line may end without splitting a phrase, as counts of the non-space characters
    before them: the ends of budoux's phrases, and every space (a break at a space between Latin
    words splits no phrase)."""
    boundaries = set()
    count = 0
    for phrase in parser.parse(text):
        for c in phrase:
            if c.isspace():
                boundaries.add(count)
            else:
                count += 1
        boundaries.add(count)
    return boundaries, count


def cjk_score(lines, text, parser):
    """The Japanese / Chinese figures for one paragraph's lines (each with text and width)."""
    boundaries, total = cjk_phrase_boundaries(parser, text)
    texts = [line["text"] for line in lines]
    counts = [sum(1 for c in t if not c.isspace()) for t in texts]
    ends = [sum(counts[:i + 1]) for i in range(len(counts))]
    multi = len(lines) >= 2
    longest = max((line["width"] for line in lines), default=0)
    last = lines[-1] if lines else {"text": "", "width": 0}
    last_start = ends[-2] if multi else 0
    one_phrase_last = multi and last_start in boundaries and not any(
        last_start < b < total for b in boundaries)
    stripped = [t.strip() for t in texts]
    return {
        "lines": len(lines),
        "multi": multi,
        "mismatch": (ends[-1] if ends else 0) != total,
        "inside_phrase": sum(1 for end in ends[:-1] if end not in boundaries),
        "starts_closing": sum(1 for t in stripped[1:] if t and t[0] in CLOSING),
        "ends_opening": sum(1 for t in stripped[:-1] if t and t[-1] in OPENING),
        "ends_one_phrase": one_phrase_last,
        "short_last": multi and longest > 0 and last["width"] < 0.25 * longest,
        "last_ratio": (last["width"] / longest) if multi and longest > 0 else 1.0,
        "lengths": counts,
    }


def cjk_table(rows, modes, title):
    """rows: {mode: [cjk_score, ...]} -> markdown lines."""
    out = [f"**{title}**", "",
           "| mode | paragraphs (2+ lines) | lines | breaks inside a phrase | lines starting with a closing mark "
           "| lines ending with an opening bracket | ends on one phrase | last line < 1/4 of longest "
           "| median last/longest | characters a line: median | 10th percentile |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for mode in modes:
        scores = rows.get(mode, [])
        multi, median, lengths, length_median = shared_columns(scores)
        out.append(
            f"| {mode} | {len(multi)} | {sum(s['lines'] for s in scores)} | "
            f"{sum(s['inside_phrase'] for s in scores)} | {sum(s['starts_closing'] for s in scores)} | "
            f"{sum(s['ends_opening'] for s in scores)} | {sum(1 for s in multi if s['ends_one_phrase'])} | "
            f"{sum(1 for s in multi if s['short_last'])} | {median:.2f} | {length_median:.1f} | "
            f"{percentile(lengths, 0.10)} |")
    return out


def cjk_font(family, characters, folder):
    """The face fontconfig gives for `family` (a .ttc collection's member picked by index),
    subset to `characters` with every layout feature kept, as base64 OpenType."""
    from fontTools import subset
    from fontTools.ttLib import TTFont
    found = subprocess.run(["fc-match", "-f", "%{file}\n%{index}", family], check=True, capture_output=True,
                           text=True).stdout.split("\n")
    path, index = found[0], int(found[1] or 0)
    options = subset.Options()
    options.layout_features = ["*"]
    options.name_IDs = ["*"]
    options.notdef_outline = True
    font = TTFont(path, fontNumber=index, lazy=False)
    name = font["name"].getDebugName(4)
    subsetter = subset.Subsetter(options)
    subsetter.populate(text="".join(sorted(set(characters))))
    subsetter.subset(font)
    out = os.path.join(folder, "cjk.otf")
    font.save(out)
    with open(out, "rb") as handle:
        return base64.b64encode(handle.read()).decode("ascii"), f"{name} ({path} #{index})"


def main_cjk(args):
    """--language ja / zh: innerpeace's Japanese or Chinese lines beside Chromium's."""
    try:
        import budoux
        import fontTools  # noqa: F401 (cjk_font subsets with it)
    except ImportError as error:
        sys.exit(f"wrap-compare: --language {args.language} needs Python's budoux and fonttools "
                 f"(pip install budoux fonttools): {error}")
    japanese = args.language == "ja"
    parser = budoux.load_default_japanese_parser() if japanese else budoux.load_default_simplified_chinese_parser()
    presets = args.preset or ["og", "square", "story"]
    modes = [{"name": "normal", "style": {"wordBreak": "normal"}}]
    if japanese:
        modes.append({"name": "auto-phrase", "style": {"wordBreak": "auto-phrase"}})
    modes += [{"name": "pretty", "style": {"textWrap": "pretty"}}, {"name": "balance", "style": {"textWrap": "balance"}}]
    if japanese:
        modes += [{"name": "auto-phrase + pretty", "style": {"wordBreak": "auto-phrase", "textWrap": "pretty"}},
                  {"name": "auto-phrase + balance", "style": {"wordBreak": "auto-phrase", "textWrap": "balance"}}]
    names = ["innerpeace"] + [m["name"] for m in modes]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="wrap-compare-cjk-") as folder:
        catalog = args.catalog
        if not catalog:
            catalog = os.path.join(folder, "catalog")
            os.mkdir(catalog)
            sentences = JAPANESE if japanese else CHINESE
            with open(os.path.join(catalog, "quotes.json"), "w", encoding="utf-8") as handle:
                json.dump([{"text": t, "author": "作者不詳" if japanese else "佚名"} for t in sentences], handle,
                          ensure_ascii=False)
            with open(os.path.join(catalog, "pictures.json"), "w", encoding="utf-8") as handle:
                json.dump([{"file": "aqua.jpg", "focus": [0.69, 0.62]}], handle)
            shutil.copy(os.path.join(ROOT, "Resources/aqua.jpg"), catalog)
        command = [args.binary, "lines", "--catalog", catalog] + [x for p in presets for x in ("--preset", p)]
        fitted = json.loads(subprocess.run(command, check=True, capture_output=True).stdout)
        prose = [f for f in fitted if not f["verse"] and not f["truncated"]]
        skipped = len(fitted) - len(prose)
        items = [{"key": f"{f['preset']}/{f['quote']}", "size": f["size"], "width": f["wrapWidth"],
                  "text": f["text"], "lines": f["lines"], "tolerance": max(2, 0.4 * f["size"])} for f in prose]
        probe = "静かな心は、嵐の中でも灯をともす。" if japanese else "安静的心，像深夜的湖水。"
        family = "Noto Serif CJK JP:lang=ja" if japanese else "Noto Serif CJK SC:lang=zh-cn"
        characters = "".join(f["text"] for f in prose) + probe + "".join("".join(f["lines"]) for f in prose)
        cjk, cjk_name = cjk_font(family, characters, folder)
        with open(args.font, "rb") as handle:
            garamond = base64.b64encode(handle.read()).decode("ascii")
        # The bundled italic sets Latin letters only, as innerpeace does; everything else (kana, Han,
        # punctuation, digits, spaces) falls to the CJK face, declared italic so Chromium never slants it.
        extra = ('@font-face { font-family: "IPCJK"; src: url(data:font/otf;base64,' + cjk
                 + ') format("opentype"); font-style: italic; font-weight: 400; }')
        data = json.dumps(items, ensure_ascii=False).replace("</", "<\\/")
        page = fill_page(garamond, data, lang="ja" if japanese else "zh-Hans", families='"IPGaramond", "IPCJK"',
                         modes=modes, font_range=" unicode-range: U+0041-005A, U+0061-007A, U+00C0-024F;",
                         extra_faces=extra, check_family="IPCJK", check_probe=probe)
        page_path = os.path.join(folder, "page.html")
        with open(page_path, "w", encoding="utf-8") as handle:
            handle.write(page)
        chromium_started = time.monotonic()
        result = run_chromium(args.chromium, page_path, budget_ms=60000, timeout=args.timeout)
        chromium_seconds = time.monotonic() - chromium_started
    font_info = result["font"]
    if "IPCJK:loaded" not in font_info.get("faces", []):
        sys.exit(f"wrap-compare: the CJK face did not load in Chromium: {font_info}")
    by_key = {f"{f['preset']}/{f['quote']}": f for f in prose}
    scores = {p: {m: [] for m in names} for p in presets}
    mismatched, overlong, worst, details = [], 0, 0.0, []
    for entry in result["results"]:
        fit = by_key[entry["key"]]
        for mode in names:
            s = cjk_score(entry["modes"][mode], fit["text"], parser)
            scores[fit["preset"]][mode].append(s)
            if s["mismatch"]:
                mismatched.append(f"{mode} {entry['key']}")
            if s["inside_phrase"] or s["starts_closing"] or s["ends_opening"] or s["ends_one_phrase"] or s["short_last"]:
                details.append((mode, entry["key"], fit["size"], fit["wrapWidth"],
                                [l["text"] for l in entry["modes"][mode]]))
        for line in entry["modes"]["innerpeace"]:
            excess = line["width"] - fit["wrapWidth"]
            if excess > 0.5:
                overlong += 1
                worst = max(worst, excess)
    version = re.search(r"Chrome/([\d.]+)", font_info["userAgent"])
    print(f"{'Japanese' if japanese else 'Simplified Chinese'} prose set at innerpeace's size and wrap width: "
          f"{len(prose)} paragraphs ({skipped} verse or truncated left out), Chromium "
          f"{version.group(1) if version else '?'} (lang={'ja' if japanese else 'zh-Hans'}), face {cjk_name} "
          f"loaded, Latin letters in the bundled italic; phrases: budoux {getattr(budoux, '__version__', '?')}. "
          f"{time.monotonic() - started:.1f} s in all, Chromium {chromium_seconds:.1f} s.")
    print(f"innerpeace's lines that Chromium measures wider than their wrap width (by over 0.5 px): {overlong}"
          + (f", by up to {worst:.1f} px." if overlong else "."))
    if mismatched:
        print(f"wrap-compare: warning: lines that do not add up to the text: {', '.join(mismatched[:8])}",
              file=sys.stderr)
    print()
    for preset in presets:
        print("\n".join(cjk_table(scores[preset], names, preset)))
        print()
    overall = {m: [s for p in presets for s in scores[p][m]] for m in names}
    print("\n".join(cjk_table(overall, names, "overall")))
    if args.details:
        print()
        for mode, key, size, width, lines in sorted(details):
            print(f"- {mode} {key} ({size} px, {width:.0f} px): " + " / ".join(lines))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(result, handle, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
