#!/usr/bin/env python3
"""The catalog's measure: characters per prose line, per preset, as innerpeace sets them.

Asks `innerpeace-bench lines` for every catalog quote's lines at og, square, story and classic
(any build mode gives the same lines) and prints, per preset, over the prose quotes (verse, text
holding its own line breaks, and truncated quotes left out): each quote's characters a line (its
characters, white space at either end of a line left out, over its lines), their median and
10th percentile over the quotes (the issue's figures: story 12.6, square 16.3, og 23.6 before
the measure rule), the median and 10th percentile over all lines pooled, the median size; and
over every card, verse included: lines ending on a one-letter word ("a", "I"; a paragraph's last
line is not counted), wrapped paragraphs (verse lines included) whose first line holds one word,
and the layouts the fitter took (passes: total, and the most for one card).

    python3 scripts/measure.py --binary .build/debug/innerpeace-bench [--preset story ...] [--json lines.json]

`--json` reads a saved `innerpeace-bench lines` output instead of running the binary.
"""
import argparse
import json
import os
import statistics
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRESETS = ["og", "square", "story", "classic"]


def percentile(values, share):
    """The nearest-rank percentile (share in 0...1) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * share // 1))
    return ordered[int(rank) - 1]


def words(line):
    return len(line.split())


def paragraphs(lines, text):
    """The lines grouped by the paragraph (verse line) they set, by non-blank characters held."""
    groups, remaining = [], list(lines)
    for paragraph in text.split("\n"):
        wanted = sum(1 for c in paragraph if not c.isspace())
        group, held = [], 0
        while remaining:
            line = remaining.pop(0)
            group.append(line)
            held += sum(1 for c in line if not c.isspace())
            if held >= wanted:
                break
        groups.append(group)
    return groups


def ends_on_one_letter(line):
    tokens = line.split()
    return len(tokens) > 1 and len(tokens[-1]) == 1 and tokens[-1].isalpha()


def summary(fitted, preset):
    cards = [f for f in fitted if f["preset"] == preset]
    prose = [f for f in cards if not f["verse"] and not f["truncated"]]
    lengths = [len(line.strip()) for f in prose for line in f["lines"]]
    per_quote = [sum(len(line.strip()) for line in f["lines"]) / len(f["lines"]) for f in prose]
    one_letter = first_word = 0
    for f in cards:
        for group in paragraphs(f["lines"], f["text"]):
            one_letter += sum(1 for line in group[:-1] if ends_on_one_letter(line))
            first_word += len(group) > 1 and words(group[0]) == 1
    return {
        "preset": preset, "prose": len(prose), "lines": len(lengths),
        "median": statistics.median(lengths), "p10": percentile(lengths, 0.10),
        "quote_median": statistics.median(per_quote), "quote_p10": percentile(per_quote, 0.10),
        "one_letter_ends": one_letter, "one_word_first": first_word,
        "sizes": statistics.median(f["size"] for f in prose),
        "passes": sum(f.get("passes", 0) for f in cards), "most_passes": max(f.get("passes", 0) for f in cards),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/debug/innerpeace-bench"))
    parser.add_argument("--json", help="a saved `innerpeace-bench lines` output to read instead")
    parser.add_argument("--preset", action="append", help="og, square, story, classic (repeatable)")
    args = parser.parse_args()
    presets = args.preset or PRESETS
    if args.json:
        with open(args.json, encoding="utf-8") as handle:
            fitted = json.load(handle)
    else:
        command = [args.binary, "lines"] + [x for p in presets for x in ("--preset", p)]
        fitted = json.loads(subprocess.run(command, check=True, capture_output=True).stdout)
    print("| preset | prose quotes | characters a line: median over quotes | 10th percentile | lines | median "
          "over lines | 10th percentile | median size (px) | lines ending on a one-letter word | one-word first "
          "lines | layouts (most for a card) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for preset in presets:
        s = summary(fitted, preset)
        print(f"| {preset} | {s['prose']} | {s['quote_median']:.1f} | {s['quote_p10']:.1f} | {s['lines']} | "
              f"{s['median']:.1f} | {s['p10']} | {s['sizes']:g} | {s['one_letter_ends']} | {s['one_word_first']} | "
              f"{s['passes']} ({s['most_passes']}) |")


if __name__ == "__main__":
    main()
