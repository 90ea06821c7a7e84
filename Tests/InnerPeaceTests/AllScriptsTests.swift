import CInnerPeace
import Foundation
import Testing

@testable import InnerPeace

/// A proverb or pangram in every script the installed Noto fonts cover, each set in its own face
/// with its language, no cluster split across fonts, no dotted circle or tofu, no synthetic
/// slant, and lines whose ink never overlaps the next line's (issue 18, items 1 and 2).
@Suite struct AllScriptsTests {
  struct Sample: Sendable, CustomStringConvertible {
    let name: String
    /// Lines of text, set with explicit breaks (the first line again last, so every pair of
    /// neighbouring lines holds the script's tall and deep letters).
    let text: String
    /// The companion's file name (`nil`: the bundled italic).
    let file: String?
    /// The companion's family as fontconfig names it.
    let family: String
    /// The language every run of the script carries (`nil`: not checked).
    let language: String?
    /// The ISO 15924 codes Pango may give the script's runs.
    let script: Set<String>
    let style: TypesetReport.Run.Style
    /// The code points whose clusters must be set in the companion.
    let own: [ClosedRange<UInt32>]
    var description: String { name }

    init(
      _ name: String, _ lines: [String], file: String?, family: String, language: String?, script: Set<String>,
      style: TypesetReport.Run.Style = .upright, own: [ClosedRange<UInt32>]
    ) {
      self.name = name
      self.text = (lines + [lines[0]]).joined(separator: "\n")
      self.file = file
      self.family = family
      self.language = language
      self.script = script
      self.style = style
      self.own = own
    }
  }

  static let latinLetters: [ClosedRange<UInt32>] = [0x41...0x5A, 0x61...0x7A, 0xC0...0x24F, 0x1E00...0x1EFF]
  static let han: [ClosedRange<UInt32>] = [0x3400...0x4DBF, 0x4E00...0x9FFF]
  static let kana: [ClosedRange<UInt32>] = [0x3040...0x30FF]

  static let samples: [Sample] = [
    Sample(
      "Latin", ["The quick brown fox jumps", "over the lazy dog."], file: nil, family: "EB Garamond",
      language: nil, script: ["Latn"], style: .italic, own: latinLetters),
    Sample(
      "Greek", ["Ἐν ἀρχῇ ἦν ὁ λόγος, καὶ ὁ λόγος", "ἦν πρὸς τὸν θεόν. Γνῶθι σαυτόν, τῷ λόγῳ ᾳ ῃ."], file: nil,
      family: "EB Garamond",
      language: nil, script: ["Grek"], style: .italic, own: [0x370...0x3FF, 0x1F00...0x1FFF]),
    Sample(
      "Cyrillic", ["Съешь же ещё этих мягких", "французских булок, да выпей чаю. Йё"], file: nil, family: "EB Garamond",
      language: nil, script: ["Cyrl"], style: .italic, own: [0x400...0x4FF]),
    Sample(
      "Vietnamese", ["Ăn quả nhớ kẻ trồng cây, gặp", "ẮT HỌC ỄNH ỘNG ẶP ẪY ỖI ỢP", "Ắ Ọ Ễ ỷ ỹ ẵ ặ gượng"], file: nil,
      family: "EB Garamond", language: nil, script: ["Latn"], style: .italic, own: latinLetters),
    Sample(
      "Arabic", ["الصبر مفتاح الفرج", "من جدّ وجد، ومن زرع حصد"], file: "NotoNaskhArabic-Regular.ttf",
      family: "Noto Naskh Arabic", language: "ar", script: ["Arab"], own: [0x600...0x6FF]),
    Sample(
      "Urdu", ["ہمت کرے انسان تو کیا ہو نہیں سکتا", "جیسی کرنی ویسی بھرنی"], file: "NotoNastaliqUrdu-Regular.ttf",
      family: "Noto Nastaliq Urdu", language: "ur", script: ["Arab"], own: [0x600...0x6FF]),
    Sample(
      "Hebrew", ["אם אין אני לי, מי לי", "וּכְשֶׁאֲנִי לְעַצְמִי, מָה אֲנִי"], file: "NotoSerifHebrew-Regular.ttf",
      family: "Noto Serif Hebrew", language: "he", script: ["Hebr"], own: [0x5D0...0x5EA]),
    Sample(
      "Devanagari", ["सत्यमेव जयते। मन की शांति", "ही सुख है। कृष्ण हृदय"], file: "NotoSerifDevanagari-Regular.ttf",
      family: "Noto Serif Devanagari", language: "hi", script: ["Deva"], own: [0x900...0x963, 0x966...0x97F]),
    Sample(
      "Bengali", ["যেখানে দেখিবে ছাই, উড়াইয়া", "দেখ তাই, পাইলেও পাইতে পার অমূল্য রতন।"],
      file: "NotoSerifBengali-Regular.ttf", family: "Noto Serif Bengali", language: "bn", script: ["Beng"],
      own: [0x980...0x9FF]),
    Sample(
      "Gurmukhi", ["ਜਿਥੇ ਚਾਹ ਉਥੇ ਰਾਹ।", "ਮਿੱਠਤ ਨੀਵੀਂ ਨਾਨਕਾ ਗੁਣ ਚੰਗਿਆਈਆ ਤਤੁ"], file: "NotoSerifGurmukhi-Regular.ttf",
      family: "Noto Serif Gurmukhi", language: "pa", script: ["Guru"], own: [0xA00...0xA7F]),
    Sample(
      "Gujarati", ["જ્યાં ચાહ ત્યાં રાહ।", "ધીરજનાં ફળ મીઠાં હોય છે. કૃપા"], file: "NotoSerifGujarati-Regular.ttf",
      family: "Noto Serif Gujarati", language: "gu", script: ["Gujr"], own: [0xA80...0xAFF]),
    Sample(
      "Tamil", ["யாதும் ஊரே யாவரும் கேளிர்.", "தீதும் நன்றும் பிறர்தர வாரா. பூங்குன்றனார்"],
      file: "NotoSerifTamilSlanted-Regular.ttf", family: "Noto Serif Tamil Slanted", language: "ta", script: ["Taml"],
      style: .slanted, own: [0xB80...0xBFF]),
    Sample(
      "Telugu", ["కృషితో నాస్తి దుర్భిక్షం.", "ప్రయత్నం చేస్తే ఫలితం వస్తుంది. స్త్రీ"], file: "NotoSerifTelugu-Regular.ttf",
      family: "Noto Serif Telugu", language: "te", script: ["Telu"], own: [0xC00...0xC7F]),
    Sample(
      "Kannada", ["ಕೈ ಕೆಸರಾದರೆ ಬಾಯಿ ಮೊಸರು.", "ಪ್ರಯತ್ನ ಮಾಡಿದರೆ ಫಲ ಸ್ತ್ರೀ ಕೃಷಿ"], file: "NotoSerifKannada-Regular.ttf",
      family: "Noto Serif Kannada", language: "kn", script: ["Knda"], own: [0xC80...0xCFF]),
    Sample(
      "Malayalam", ["ഒരുമയുണ്ടെങ്കിൽ ഉലക്കമേലും", "കിടക്കാം. ക്ഷമ സ്ത്രീ കൃഷി"], file: "NotoSerifMalayalam-Regular.ttf",
      family: "Noto Serif Malayalam", language: "ml", script: ["Mlym"], own: [0xD00...0xD7F]),
    Sample(
      "Sinhala", ["කළ දේ පළ දේ.", "ඉවසීම ශ්‍රේෂ්ඨයි. ක්‍රෝධය"], file: "NotoSerifSinhala-Regular.ttf",
      family: "Noto Serif Sinhala", language: "si", script: ["Sinh"], own: [0xD80...0xDFF]),
    Sample(
      "Thai", ["ความสงบในใจคือความสุข", "น้ำขึ้นให้รีบตัก ญี่ปุ่น ฎีกา"], file: "NotoSerifThai-Regular.ttf",
      family: "Noto Serif Thai", language: "th", script: ["Thai"], own: [0xE01...0xE5B]),
    Sample(
      "Lao", ["ຄວາມສະຫງົບໃນໃຈແມ່ນຄວາມສຸກ", "ນ້ຳໃຈ ຂອບໃຈຫຼາຍໆ"], file: "NotoSerifLao-Regular.ttf",
      family: "Noto Serif Lao", language: "lo", script: ["Laoo"], own: [0xE80...0xEFF]),
    Sample(
      "Khmer", ["ចេះឲ្យចាំ ធ្វើឲ្យពិត។", "ស្ត្រី ក្បាល ព្រះអាទិត្យ"], file: "NotoSerifKhmer-Regular.ttf",
      family: "Noto Serif Khmer", language: "km", script: ["Khmr"], own: [0x1780...0x17FF]),
    Sample(
      "Myanmar", ["ကြိုးစားလျှင် အောင်မြင်မည်။", "မြန်မာစာ ကျွန်ုပ် ဿ"], file: "NotoSerifMyanmar-Regular.ttf",
      family: "Noto Serif Myanmar", language: "my", script: ["Mymr"], own: [0x1000...0x109F]),
    Sample(
      "Tibetan", ["བཀྲ་ཤིས་བདེ་ལེགས།", "སྒྲུབ་པ་བསྐྱེད་པ། རྒྱ་མཚོ། ཧྥྲཱྀ"], file: "NotoSerifTibetan-Regular.ttf",
      family: "Noto Serif Tibetan", language: "bo", script: ["Tibt"], own: [0xF00...0xFFF]),
    Sample(
      "Georgian", ["ვინც არ ეძებს,", "ის ვერ პოულობს. ყველა"], file: "NotoSerifGeorgian-Regular.ttf",
      family: "Noto Serif Georgian", language: "ka", script: ["Geor"], own: [0x10A0...0x10FF]),
    Sample(
      "Armenian", ["Կամաց գնացողը", "հեռու կգնա։ Ժամանակ"], file: "NotoSerifArmenian-Regular.ttf",
      family: "Noto Serif Armenian", language: "hy", script: ["Armn"], own: [0x530...0x58F]),
    Sample(
      "Ethiopic", ["ቀስ በቀስ እንቁላል", "በእግሩ ይሄዳል። ፍቅር"], file: "NotoSerifEthiopic-Regular.ttf",
      family: "Noto Serif Ethiopic", language: "am", script: ["Ethi"], own: [0x1200...0x139F]),
    Sample(
      "Chinese", ["静水流深，宁静致远。", "淡泊明志，学而时习之。"], file: "NotoSerifCJK-Regular.ttc",
      family: "Noto Serif CJK SC", language: "zh-hans", script: ["Hani"], own: han),
    Sample(
      "Japanese", ["静かな心で生きる。", "七転び八起き、急がば回れ。"], file: "NotoSerifCJK-Regular.ttc",
      family: "Noto Serif CJK JP", language: "ja", script: ["Hani", "Hira", "Kana"], own: han + kana),
    Sample(
      "Korean", ["마음의 평화를 찾아라.", "천 리 길도 한 걸음부터"], file: "NotoSerifCJK-Regular.ttc",
      family: "Noto Serif CJK KR", language: "ko", script: ["Hang"], own: [0xAC00...0xD7AF]),
    Sample(
      "Emoji", ["Peace 🕊️ and calm 🌿", "a smile 😊 👍🏽 👨‍👩‍👧 🇯🇵"], file: "NotoColorEmoji.ttf",
      family: "Noto Color Emoji", language: nil, script: ["Zyyy", "Latn"], own: [0x1F000...0x1FAFF]),
  ]

  /// The files fontconfig lists for `family`.
  static func installedFiles(family: String) -> [String] {
    guard let pattern = FcPatternCreate() else { return [] }
    defer { FcPatternDestroy(pattern) }
    _ = family.withCString {
      FcPatternAddString(pattern, FC_FAMILY, UnsafeRawPointer($0).assumingMemoryBound(to: FcChar8.self))
    }
    guard let objects = FcObjectSetCreate() else { return [] }
    defer { FcObjectSetDestroy(objects) }
    FcObjectSetAdd(objects, FC_FILE)
    guard let set = FcFontList(nil, pattern, objects) else { return [] }
    defer { FcFontSetDestroy(set) }
    var files: [String] = []
    for index in 0..<Int(set.pointee.nfont) {
      var file: UnsafeMutablePointer<FcChar8>?
      if let font = set.pointee.fonts[index], FcPatternGetString(font, FC_FILE, 0, &file) == FcResultMatch, let file {
        files.append(String(cString: file))
      }
    }
    return files
  }

  /// UTF-8 offsets where a grapheme cluster starts, and the end.
  static func clusterBoundaries(_ text: String) -> Set<Int> {
    var boundaries: Set<Int> = [text.utf8.count]
    var offset = 0
    for character in text {
      boundaries.insert(offset)
      offset += character.utf8.count
    }
    return boundaries
  }

  /// The ink of each line drawn alone, as an alpha mask over the whole layout's box, at half
  /// the reference size.
  static func lineMasks(_ layout: TextLayout) -> (width: Int, height: Int, masks: [[UInt8]]) {
    FontLock.withLock {
      var ink = PangoRectangle()
      var logical = PangoRectangle()
      pango_layout_get_extents(layout.handle, &ink, &logical)
      let unit = Double(innerpeace_pango_scale)
      let factor = 0.5
      let left = Double(min(ink.x, logical.x)) / unit
      let top = Double(min(ink.y, logical.y)) / unit
      let right = Double(max(ink.x + ink.width, logical.x + logical.width)) / unit
      let bottom = Double(max(ink.y + ink.height, logical.y + logical.height)) / unit
      let width = Int(((right - left) * factor).rounded(.up)) + 4
      let height = Int(((bottom - top) * factor).rounded(.up)) + 4
      var masks: [[UInt8]] = []
      guard let iterator = pango_layout_get_iter(layout.handle) else { return (width, height, masks) }
      defer { pango_layout_iter_free(iterator) }
      repeat {
        let baseline = Double(pango_layout_iter_get_baseline(iterator)) / unit
        var lineLogical = PangoRectangle()
        pango_layout_iter_get_line_extents(iterator, nil, &lineLogical)
        let surface = cairo_image_surface_create(CAIRO_FORMAT_A8, Int32(width), Int32(height))!
        let context = cairo_create(surface)!
        cairo_translate(context, 2, 2)
        cairo_scale(context, factor, factor)
        cairo_move_to(context, Double(lineLogical.x) / unit - left, baseline - top)
        if let line = pango_layout_iter_get_line_readonly(iterator) { pango_cairo_show_layout_line(context, line) }
        cairo_surface_flush(surface)
        let stride = Int(cairo_image_surface_get_stride(surface))
        let data = cairo_image_surface_get_data(surface)!
        var mask = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height {
          for x in 0..<width { mask[y * width + x] = data[y * stride + x] }
        }
        masks.append(mask)
        cairo_destroy(context)
        cairo_surface_destroy(surface)
      } while pango_layout_iter_next_line(iterator) != 0
      return (width, height, masks)
    }
  }

  /// For each pair of neighbouring lines, the pixels inked (alpha above a quarter) by both.
  static func overlappingPixels(_ layout: TextLayout) -> [Int] {
    let (width, height, masks) = lineMasks(layout)
    var counts: [Int] = []
    for index in 0..<max(0, masks.count - 1) {
      let (upper, lower) = (masks[index], masks[index + 1])
      var count = 0
      for pixel in 0..<(width * height) where upper[pixel] > 64 && lower[pixel] > 64 { count += 1 }
      counts.append(count)
    }
    return counts
  }

  @Test(arguments: samples)
  func scriptIsSetInItsOwnFace(_ sample: Sample) throws {
    let companionFile: String
    if let file = sample.file {
      guard let installed = Self.installedFiles(family: sample.family).first(where: { $0.hasSuffix("/" + file) })
      else {
        // Fonts vary by machine: a script whose face is not installed is not checked here.
        try Test.cancel("\(sample.family) (\(file)) is not installed: \(sample.name) skipped")
      }
      companionFile = installed
    } else {
      companionFile = Fixtures.renderer.bundledFontPath
    }
    let layout = ScriptTests.layout(sample.text)
    let runs = layout.setRuns
    #expect(!runs.isEmpty)
    #expect(layout.unknownGlyphCount == 0, "\(sample.name): tofu")
    #expect(layout.dottedCircleCount == 0, "\(sample.name): dotted circles \(runs.filter { $0.dottedCircles > 0 })")
    let boundaries = Self.clusterBoundaries(sample.text)
    for run in runs {
      #expect(
        boundaries.contains(run.range.lowerBound) && boundaries.contains(run.range.upperBound),
        "\(sample.name): run \(run.text.debugDescription) splits a cluster")
      #expect(run.missingGlyphs == 0 && run.dottedCircles == 0, "\(sample.name): \(run)")
      #expect(run.style != .syntheticOblique, "\(sample.name): synthetic slant on \(run)")
      // Each cluster of the script is set in the companion, with the language; anything else
      // (spaces, digits, punctuation) in the companion, the bundled italic or Noto Serif, never
      // synthetic.
      var offset = run.range.lowerBound
      for character in run.text {
        defer { offset += character.utf8.count }
        guard let first = character.unicodeScalars.first, sample.own.contains(where: { $0.contains(first.value) })
        else { continue }
        let context = "\(sample.name): \(character) at \(offset) in \(run)"
        #expect(run.fontFile == companionFile, "\(context)")
        #expect(run.family == sample.family, "\(context)")
        #expect(run.style == sample.style, "\(context)")
        if let language = sample.language { #expect(run.language == language, "\(context)") }
        #expect(sample.script.contains(run.script), "\(context)")
      }
    }
    // Every line as tall as the others, and no line's ink touching the next line's.
    let heights = ScriptTests.lineHeights(layout)
    #expect(heights.count == 3 || heights.count == 4)
    #expect(Set(heights).count == 1, "\(sample.name): line heights \(heights)")
    let overlapping = Self.overlappingPixels(layout)
    #expect(overlapping.allSatisfy { $0 == 0 }, "\(sample.name): lines overlap at \(overlapping) pixels")
  }
}
