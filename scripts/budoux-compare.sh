#!/usr/bin/env bash
# Compares innerpeace's phrase segmenter (Sources/InnerPeace/Pipeline/PhraseSegmenter.swift) with
# Python BudouX on Japanese, Simplified and Traditional Chinese sentences: Python writes the phrases
# it finds to a file, and the test BreakRulesTests/phrasesMatchLiveBudouX checks that the Swift
# segmenter finds the same. Skips (exit 0, with a note) when the `budoux` package is not installed.
# Run after `swift build --build-tests`.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! python3 -c 'import budoux' 2>/dev/null; then
  echo "budoux-compare: Python package budoux not installed (pip install budoux); skipped"
  exit 0
fi
expected="$(mktemp "${TMPDIR:-/tmp}/budoux-expected.XXXXXX.json")"
trap 'rm -f "$expected"' EXIT

python3 - "$expected" <<'PY'
import json, sys
import budoux

sentences = {
    "ja": [
        "今日は天気です。", "穏やかな心で、ゆっくり歩いていこう。", "静けさの中に生き甲斐がある。",
        "七転び八起き。", "千里の道も一歩から。", "急がば回れ。", "石の上にも三年。",
        "雨ニモマケズ風ニモマケズ雪ニモ夏ノ暑サニモマケヌ丈夫ナカラダヲモチ",
        "古池や蛙飛び込む水の音", "明日は明日の風が吹く。", "一期一会を大切にしたいと思います。",
        "花より団子というけれど、私は花が好きです。", "「ありがとう」と言える人になりたい。",
        "東京タワーから富士山が見えた。", "人生は近くで見ると悲劇だが、遠くから見れば喜劇だ。",
    ],
    "zh-hans": [
        "淡泊明志，宁静致远。", "千里之行，始于足下。", "知之为知之，不知为不知，是知也。",
        "我们一起去看海吧。", "学而时习之，不亦说乎？", "非淡泊无以明志，非宁静无以致远。",
        "天行健，君子以自强不息。", "海内存知己，天涯若比邻。", "今天的天气非常好，我们去公园散步吧。",
        "生活不止眼前的苟且，还有诗和远方。",
    ],
    "zh-hant": [
        "千里之行，始於足下。", "學而時習之，不亦說乎？", "我們一起去看海吧。",
        "海內存知己，天涯若比鄰。", "今天的天氣非常好，我們去公園散步吧。", "寧靜致遠，淡泊明志。",
    ],
}
parsers = {
    "ja": budoux.load_default_japanese_parser(),
    "zh-hans": budoux.load_default_simplified_chinese_parser(),
    "zh-hant": budoux.load_default_traditional_chinese_parser(),
}
cases = [
    {"model": model, "sentence": s, "phrases": parsers[model].parse(s)}
    for model, group in sentences.items()
    for s in group
]
with open(sys.argv[1], "w", encoding="utf-8") as f:
    json.dump(cases, f, ensure_ascii=False)
print(f"budoux-compare: {len(cases)} sentences from budoux {getattr(budoux, '__version__', '?')}")
PY

INNERPEACE_BUDOUX_EXPECTED="$expected" swift test --skip-build --filter 'BreakRulesTests/phrasesMatchLiveBudouX'
