#!/usr/bin/env python3
"""Contact sheets: every catalog quote at every preset, and a sheet of scripts, to look at.

    python3 scripts/contact-sheet.py --binary .build/debug/innerpeace --out DIR [--jobs 2]
        [--preset og ...] [--skip-catalog] [--skip-scripts] [--count N]

Writes into DIR:
- catalog-<preset>-<n>.png: thumbnails of every catalog quote at og, square, story and classic,
  in a grid, each labelled with its quote index (several sheets per preset);
- scripts-<preset>.png: the same short quote-like text in Chinese, Japanese, Korean, Arabic,
  Hebrew, Devanagari, Thai, Urdu, Bengali, Gurmukhi, Gujarati, Tamil, Telugu, Kannada,
  Malayalam, Sinhala, Lao, Khmer, Myanmar, Tibetan, Georgian, Armenian, Ethiopic, Vietnamese,
  Cyrillic, polytonic Greek (with ᾳ ῃ ῳ), emoji, a long URL and verse with a long line, at og,
  square and story, each labelled;
- cards/ and scripts/: the full-size cards (`innerpeace batch` output, with its manifest), for a
  closer look at anything the thumbnails show.

The cards come from `innerpeace batch` (one run per sheet set, --jobs renders at once; the
scripts run uses a throwaway catalog folder holding the texts below and one bundled photo), so
nothing is built and no server is started. Needs Pillow.
"""
import argparse
import glob
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from PIL import Image, ImageDraw, ImageFont

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRESETS = ["og", "square", "story", "classic"]
SCRIPT_PRESETS = ["og", "square", "story"]

# Thumbnail width per preset for catalog sheets, and (columns, rows) per sheet.
CATALOG_LAYOUT = {"og": (400, 5, 6), "square": (320, 6, 5), "story": (270, 8, 3), "classic": (400, 5, 6)}
SCRIPT_LAYOUT = {"og": (600, 3), "square": (420, 4), "story": (300, 6)}

# The same short, quote-like text in several scripts: (label, text, author).
SCRIPTS = [
    ("Chinese", "宁静致远，淡泊明志。心若止水，万物自安，一念放下，万般自在。", "诸葛亮"),
    ("Japanese", "静かな心は、穏やかな海のようだ。ゆっくりと息をして、今この瞬間を生きよう。", "作者不詳"),
    ("Korean", "고요한 마음은 잔잔한 바다와 같다. 천천히 숨을 쉬고 지금 이 순간을 살아라.", "작자 미상"),
    ("Arabic", "القلب الهادئ كالبحر الساكن. تنفّس ببطء وعِش هذه اللحظة، كما قيل منذ عام 1207.", "مجهول"),
    ("Hebrew", "לב שקט הוא כמו ים רגוע. נשום לאט וחיה את הרגע הזה, כפי שנאמר בשנת 1207.", "אלמוני"),
    ("Devanagari", "शांत मन एक शांत समुद्र के समान है। धीरे साँस लो और इस क्षण में जियो।", "अज्ञात"),
    ("Thai", "จิตใจที่สงบเหมือนทะเลที่เงียบสงบ หายใจช้าๆ และอยู่กับปัจจุบันขณะนี้", "ไม่ทราบผู้แต่ง"),
    ("Greek (polytonic)", "Ἐν ἡσυχίᾳ καὶ ἐν ἀνάγκῃ ὁ σοφὸς μένει ἐν τῷ λόγῳ, ὡς θάλασσα γαλήνης.", "Ἀνώνυμος"),
    ("Urdu", "ہمت کرے انسان تو کیا ہو نہیں سکتا۔ جیسی کرنی ویسی بھرنی، یہی زندگی کا اصول ہے۔", "علامہ اقبال"),
    ("Bengali", "যেখানে দেখিবে ছাই, উড়াইয়া দেখ তাই, পাইলেও পাইতে পার অমূল্য রতন।", "প্রবাদ"),
    ("Gurmukhi", "ਜਿਥੇ ਚਾਹ ਉਥੇ ਰਾਹ। ਮਿੱਠਤ ਨੀਵੀਂ ਨਾਨਕਾ ਗੁਣ ਚੰਗਿਆਈਆ ਤਤੁ।", "ਗੁਰੂ ਨਾਨਕ"),
    ("Gujarati", "જ્યાં ચાહ ત્યાં રાહ. ધીરજનાં ફળ મીઠાં હોય છે, શાંત મન સુખી જીવન.", "કહેવત"),
    ("Tamil", "யாதும் ஊரே யாவரும் கேளிர். தீதும் நன்றும் பிறர்தர வாரா.", "கணியன் பூங்குன்றனார்"),
    ("Telugu", "కృషితో నాస్తి దుర్భిక్షం. ప్రయత్నం చేస్తే ఫలితం తప్పక వస్తుంది.", "సామెత"),
    ("Kannada", "ಕೈ ಕೆಸರಾದರೆ ಬಾಯಿ ಮೊಸರು. ಪ್ರಯತ್ನ ಮಾಡಿದರೆ ಫಲ ಸಿಗುತ್ತದೆ.", "ಗಾದೆ"),
    ("Malayalam", "ഒരുമയുണ്ടെങ്കിൽ ഉലക്കമേലും കിടക്കാം. ക്ഷമയാണ് ശക്തി.", "പഴഞ്ചൊല്ല്"),
    ("Sinhala", "කළ දේ පළ දේ. ඉවසීම ශ්‍රේෂ්ඨයි, සිත සන්සුන් නම් ජීවිතය සුවයි.", "කියමන"),
    ("Lao", "ຄວາມສະຫງົບໃນໃຈແມ່ນຄວາມສຸກ ນ້ຳໃຈງາມ ຂອບໃຈຫຼາຍໆ", "ສຸພາສິດ"),
    ("Khmer", "ចេះឲ្យចាំ ធ្វើឲ្យពិត។ ចិត្តស្ងប់ ជីវិតសុខ។", "សុភាសិត"),
    ("Myanmar", "ကြိုးစားလျှင် အောင်မြင်မည်။ စိတ်ငြိမ်လျှင် ချမ်းသာမည်။", "စကားပုံ"),
    ("Tibetan", "བཀྲ་ཤིས་བདེ་ལེགས། སེམས་ཞི་བ་ནི་བདེ་བའི་རྩ་བ་ཡིན།", "གཏམ་དཔེ།"),
    ("Georgian", "ვინც არ ეძებს, ის ვერ პოულობს. მშვიდი გული ყველაზე დიდი სიმდიდრეა.", "ანდაზა"),
    ("Armenian", "Կամաց գնացողը հեռու կգնա։ Խաղաղ սիրտը մեծ հարստություն է։", "Ասացվածք"),
    ("Ethiopic", "ቀስ በቀስ እንቁላል በእግሩ ይሄዳል። ትዕግስት መራራ ናት ፍሬዋ ግን ጣፋጭ ነው።", "ምሳሌ"),
    ("Vietnamese", "ẮT HẲN MỌI VIỆC ĐỀU ỔN. Ăn quả nhớ kẻ trồng cây, uống nước nhớ nguồn.", "Tục ngữ"),
    ("Cyrillic", "Тише едешь — дальше будешь. Терпение и труд всё перетрут.", "Пословица"),
    ("Emoji", "Breathe in 🌿, breathe out 🌊. Peace begins with a smile 😊🙏🏽 and a quiet heart ❤️.", "Anonymous"),
    ("Long URL", "Read more about calm at https://example.com/articles/inner-peace/a-very-long-path-name"
     "?utm_source=newsletter&utm_medium=email&utm_campaign=quiet-mind", "innerpeace"),
    ("Verse, long line", "The woods are lovely, dark and deep,\nBut I have promises to keep, and miles and miles "
     "and miles to go before I sleep,\nAnd miles to go before I sleep.", "Robert Frost"),
]


def label_font(size):
    for path in ("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"):
        if os.path.exists(path):
            return ImageFont.truetype(path, size)
    return ImageFont.load_default(size)


def batch(binary, out_dir, presets, jobs, image_format, catalog=None, count=None):
    """Renders the catalog at the presets with `innerpeace batch`; returns {(index, preset): path}."""
    command = [binary, "batch", "--out-dir", out_dir, "--preset", ",".join(presets), "--jobs", str(jobs),
               "--format", image_format, "--quiet"]
    if catalog:
        command += ["--catalog", catalog]
    if count:
        command += ["--count", str(count)]
    completed = subprocess.run(command, capture_output=True, text=True)
    if completed.returncode not in (0, 1):
        sys.exit(f"contact-sheet: {' '.join(command)} failed ({completed.returncode}): {completed.stderr[-2000:]}")
    if completed.stderr.strip():
        print(completed.stderr.strip(), file=sys.stderr)
    cards = {}
    for path in glob.glob(os.path.join(out_dir, "*.*")):
        match = re.fullmatch(r"(\d+)-(\w+)\.(png|jpg|jpeg|webp)", os.path.basename(path))
        if match:
            cards[(int(match.group(1)), match.group(2))] = path
    return cards


def thumbnail(path, width):
    with Image.open(path) as image:
        image = image.convert("RGB")
        height = round(image.height * width / image.width)
        return image.resize((width, height), Image.LANCZOS)


def sheet(entries, width, columns, title, font, title_font):
    """entries: [(label, path)] -> one sheet image, thumbnails in a grid, each labelled above."""
    gap, label_height, title_height = 12, 26, 44
    thumbs = [(label, thumbnail(path, width)) for label, path in entries]
    cell_height = max(t.height for _, t in thumbs) + label_height
    rows = math.ceil(len(thumbs) / columns)
    image = Image.new(
        "RGB", (gap + columns * (width + gap), title_height + rows * (cell_height + gap) + gap), (32, 32, 36))
    draw = ImageDraw.Draw(image)
    draw.text((gap, 10), title, fill=(240, 240, 240), font=title_font)
    for number, (label, thumb) in enumerate(thumbs):
        x = gap + (number % columns) * (width + gap)
        y = title_height + (number // columns) * (cell_height + gap)
        draw.text((x, y + 3), label, fill=(255, 220, 120), font=font)
        image.paste(thumb, (x, y + label_height))
    return image


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/debug/innerpeace"))
    parser.add_argument("--out", required=True, help="folder for the sheets (created if missing)")
    parser.add_argument("--jobs", type=int, default=2, help="cards rendered at once")
    parser.add_argument("--preset", action="append", help="limit the catalog sheets to these presets (repeatable)")
    parser.add_argument("--format", default="jpeg", help="the cards' format: jpeg (quickest), png or webp")
    parser.add_argument("--count", type=int, help="only the first N catalog quotes")
    parser.add_argument("--skip-catalog", action="store_true")
    parser.add_argument("--skip-scripts", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    font, title_font = label_font(18), label_font(26)
    written = []

    if not args.skip_catalog:
        presets = args.preset or PRESETS
        started = time.monotonic()
        cards = batch(args.binary, os.path.join(args.out, "cards"), presets, args.jobs, args.format, count=args.count)
        print(f"catalog: {len(cards)} cards in {time.monotonic() - started:.0f} s", file=sys.stderr)
        for preset in presets:
            width, columns, rows = CATALOG_LAYOUT.get(preset, (320, 6, 5))
            indices = sorted(index for index, name in cards if name == preset)
            per_sheet = columns * rows
            for number in range(0, len(indices), per_sheet):
                chunk = indices[number:number + per_sheet]
                title = f"{preset}: quotes {chunk[0]}-{chunk[-1]}"
                image = sheet([(f"#{i}", cards[(i, preset)]) for i in chunk], width, columns, title, font, title_font)
                path = os.path.join(args.out, f"catalog-{preset}-{number // per_sheet + 1}.png")
                image.save(path, optimize=False)
                written.append(path)

    if not args.skip_scripts:
        with tempfile.TemporaryDirectory(prefix="contact-sheet-catalog-") as folder:
            picture = "garden.jpg"
            shutil.copy(os.path.join(ROOT, "Resources", picture), os.path.join(folder, picture))
            with open(os.path.join(folder, "pictures.json"), "w") as handle:
                json.dump([picture], handle)
            with open(os.path.join(folder, "quotes.json"), "w", encoding="utf-8") as handle:
                json.dump([{"text": text, "author": author} for _, text, author in SCRIPTS], handle, ensure_ascii=False)
            started = time.monotonic()
            cards = batch(args.binary, os.path.join(args.out, "scripts"), SCRIPT_PRESETS, args.jobs, args.format, catalog=folder)
            print(f"scripts: {len(cards)} cards in {time.monotonic() - started:.0f} s", file=sys.stderr)
        for preset in SCRIPT_PRESETS:
            width, columns = SCRIPT_LAYOUT[preset]
            entries = [(f"{label} ({preset})", cards[(i, preset)]) for i, (label, _, _) in enumerate(SCRIPTS)
                       if (i, preset) in cards]
            image = sheet(entries, width, columns, f"scripts at {preset}", font, title_font)
            path = os.path.join(args.out, f"scripts-{preset}.png")
            image.save(path)
            written.append(path)

    for path in written:
        print(path)


if __name__ == "__main__":
    main()
