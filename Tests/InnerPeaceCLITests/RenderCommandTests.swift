import Foundation
import InnerPeace
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `innerpeace render`, end to end through the built binary.
@Suite("innerpeace render", .tags(.process, .binary))
struct RenderCommandTests {
  static let photo = packageRoot.appendingPathComponent("Resources/aqua.jpg")

  init() throws {
    try #require(innerpeaceBinary != nil, "\(CLI.Missing().description)")
  }

  // MARK: Success

  @Test func rendersAPNGDeterministicallyToFilesAndStdout() throws {
    try withTemporaryFolder { folder in
      let first = folder.appendingPathComponent("first.png")
      let second = folder.appendingPathComponent("second.png")
      let a = try CLI.run(["render", "--out", first.path, "--seed", "7"])
      #expect(a.status == 0, "stderr: \(a.stderr)")
      #expect(a.stderr.isEmpty, "a successful render is silent: \(a.stderr)")
      #expect(a.stdout.isEmpty)
      let bytes = [UInt8](try Data(contentsOf: first))
      let header = try #require(pngHeader(bytes), "not a PNG")
      #expect(header.width == 1200 && header.height == 630, "the default preset is og")
      #expect(header.colourType == 2)

      let b = try CLI.run(["render", "--out", second.path, "--seed", "7"])
      #expect(b.status == 0, "stderr: \(b.stderr)")
      #expect([UInt8](try Data(contentsOf: second)) == bytes, "the same seed gave different files")

      let c = try CLI.run(["render", "--out", "-", "--seed", "7"])
      #expect(c.status == 0, "stderr: \(c.stderr)")
      #expect(c.stdout == bytes, "stdout differs from the file for the same seed")

      #expect(listing(folder) == ["first.png", "second.png"], "leftover files: \(listing(folder))")
    }
  }

  @Test func differentSeedsGiveDifferentCards() throws {
    let a = try CLI.run(["render", "--out", "-", "--seed", "1", "--size", "300x200"])
    let b = try CLI.run(["render", "--out", "-", "--seed", "2", "--size", "300x200"])
    #expect(a.status == 0 && b.status == 0, "\(a.stderr) \(b.stderr)")
    #expect(a.stdout != b.stdout)
  }

  @Test func optionsShapeTheCard() throws {
    try withTemporaryFolder { folder in
      let out = folder.appendingPathComponent("card.png")
      let result = try CLI.run([
        "render", "--out", out.path, "--size", "640x360", "--text", "Breathe.", "--author", "Me", "--picture",
        "dune.jpg",
        "--align", "center", "--seed", "3",
      ])
      #expect(result.status == 0, "stderr: \(result.stderr)")
      let header = try #require(pngHeader([UInt8](try Data(contentsOf: out))))
      #expect(header.width == 640 && header.height == 360)

      let classic = try CLI.run([
        "render", "--out", "-", "--preset", "square", "--quote", "2", "--no-author", "--seed", "3",
      ])
      #expect(classic.status == 0, "stderr: \(classic.stderr)")
      let square = try #require(pngHeader(classic.stdout))
      #expect(square.width == 1080 && square.height == 1080)
    }
  }

  @Test func formatsFromOptionAndExtension() throws {
    try withTemporaryFolder { folder in
      let jpeg = folder.appendingPathComponent("card.out")
      let r1 = try CLI.run(["render", "--out", jpeg.path, "--format", "jpeg", "--seed", "7", "--size", "400x300"])
      #expect(r1.status == 0, "stderr: \(r1.stderr)")
      let jpegBytes = [UInt8](try Data(contentsOf: jpeg))
      #expect(Array(jpegBytes.prefix(3)) == [0xFF, 0xD8, 0xFF], "--format jpeg is not JPEG")

      let jpg = folder.appendingPathComponent("card.JPG")
      let r2 = try CLI.run(["render", "--out", jpg.path, "--seed", "7", "--size", "400x300"])
      #expect(r2.status == 0, "stderr: \(r2.stderr)")
      #expect(Array([UInt8](try Data(contentsOf: jpg)).prefix(3)) == [0xFF, 0xD8, 0xFF], ".JPG is not JPEG")

      let webp = folder.appendingPathComponent("card.webp")
      let r3 = try CLI.run(["render", "--out", webp.path, "--seed", "7", "--size", "400x300"])
      #expect(r3.status == 0, "stderr: \(r3.stderr)")
      let webpBytes = [UInt8](try Data(contentsOf: webp))
      #expect(
        Array(webpBytes.prefix(4)) == Array("RIFF".utf8) && Array(webpBytes[8..<12]) == Array("WEBP".utf8),
        ".webp is not WebP")

      let avif = folder.appendingPathComponent("card.avif")
      let r5 = try CLI.run(["render", "--out", avif.path, "--seed", "7", "--size", "400x300"])
      #expect(r5.status == 0, "stderr: \(r5.stderr)")
      let avifImage = DecodedAVIF([UInt8](try Data(contentsOf: avif)))
      #expect(avifImage?.width == 400 && avifImage?.height == 300, ".avif is not a 400x300 AVIF")

      let transparent = folder.appendingPathComponent("layer.png")
      let r4 = try CLI.run(["render", "--out", transparent.path, "--transparent", "--seed", "7", "--size", "400x300"])
      #expect(r4.status == 0, "stderr: \(r4.stderr)")
      #expect(pngHeader([UInt8](try Data(contentsOf: transparent)))?.colourType == 6, "--transparent is not RGBA")

      #expect(
        listing(folder) == ["card.JPG", "card.avif", "card.out", "card.webp", "layer.png"],
        "leftover files: \(listing(folder))")
    }
  }

  @Test func overLongTextIsTruncatedWithAWarning() throws {
    let text = String(repeating: "calm ", count: 999) + "calm!"
    let result = try CLI.run(["render", "--out", "-", "--text", text, "--seed", "1", "--size", "400x300"])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    #expect(pngHeader(result.stdout) != nil)
    #expect(
      result.stderrLines.count == 1 && result.stderr.localizedCaseInsensitiveContains("warning"), "\(result.stderr)")
  }

  /// A glyph no installed font can draw is drawn as a box: the card is still made (exit 0),
  /// and stderr says how many there are.
  @Test func missingGlyphsWarn() throws {
    let result = try CLI.run(["render", "--out", "-", "--text", "Calm \u{0380}\u{0378}", "--size", "300x200"])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    #expect(pngHeader(result.stdout) != nil)
    #expect(result.stderrLines.count == 1 && result.stderr.contains("warning: 2 glyph"), "\(result.stderr)")
    let clean = try CLI.run(["render", "--out", "-", "--text", "Calm 静", "--size", "300x200"])
    #expect(clean.status == 0 && clean.stderr.isEmpty, "\(clean.stderr)")
  }

  /// Texts that crashed `render` (issue 7) render, in a child process, so a crash fails only
  /// this test: two wider than any bounds (the wrap width went below zero and the conversion
  /// trapped), one with a word break inside a grapheme (Pango aborted at 1000x1000).
  @Test(arguments: [
    ["--text", "\u{1F468}" + String(repeating: "\u{200D}\u{1F468}", count: 120)],
    ["--text", String(repeating: "\u{1100}", count: 200) + "\u{1161}\u{11A8}"],
    [
      "--text", "\u{5D1}\u{1AE0}\u{1322}\u{1219}\u{5BF}\u{1F3FB}\u{20E3}\u{1326}\u{12BB}", "--author", "\u{1AB1}",
      "--size", "1000x1000",
    ],
  ])
  func hostileTextRenders(options: [String]) throws {
    let result = try CLI.run(["render", "--out", "-", "--seed", "1"] + options)
    #expect(result.status == 0, "exit \(result.status): \(result.stderr.suffix(400))")
    #expect(pngHeader(result.stdout) != nil)
  }

  @Test func replacesAnExistingFileAtomically() throws {
    try withTemporaryFolder { folder in
      let out = folder.appendingPathComponent("card.png")
      try Data("old".utf8).write(to: out)
      let result = try CLI.run(["render", "--out", out.path, "--seed", "7", "--size", "300x200"])
      #expect(result.status == 0, "stderr: \(result.stderr)")
      #expect(pngHeader([UInt8](try Data(contentsOf: out))) != nil)
      #expect(listing(folder) == ["card.png"])
    }
  }

  @Test func relativeOutputPathInTheWorkingFolder() throws {
    // `--out card.png` (no folder) writes into the current directory.
    try withTemporaryFolder { folder in
      let result = try CLI.run(["render", "--out", "card.png", "--seed", "7", "--size", "300x200"], in: folder)
      #expect(result.status == 0, "stderr: \(result.stderr)")
      #expect(listing(folder) == ["card.png"])
      #expect(pngHeader([UInt8](try Data(contentsOf: folder.appendingPathComponent("card.png")))) != nil)
    }
  }

  /// A quote or author may begin with a dash ("-1 is a number", "- anonymous"): it is a value,
  /// not an option, and must reach the card.
  @Test func textAndAuthorMayStartWithADash() throws {
    let result = try CLI.run([
      "render", "--out", "-", "--size", "300x200", "--seed", "1", "--text", "-1 is a number", "--author", "-anon",
    ])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    #expect(pngHeader(result.stdout) != nil)
  }

  /// `--text -` reads the quote from stdin and `--text-file PATH` from a file (`-` stdin too):
  /// the same card as `--text` with the same words, the trailing line breaks dropped and the
  /// inner ones kept; a quote that is just `-` comes from a file.
  @Test func textFromStdinOrAFile() throws {
    try withTemporaryFolder { folder in
      let common = ["render", "--out", "-", "--size", "300x200", "--seed", "1", "--author", "Me"]
      let quote = "Breathe in.\nBreathe out."
      let reference = try CLI.run(common + ["--text", quote])
      #expect(reference.status == 0 && pngHeader(reference.stdout) != nil, "stderr: \(reference.stderr)")

      let piped = try CLI.run(common + ["--text", "-"], stdin: Array((quote + "\n").utf8))
      #expect(piped.status == 0, "stderr: \(piped.stderr)")
      #expect(piped.stdout == reference.stdout, "--text - draws what stdin holds")

      let file = folder.appendingPathComponent("quote.txt")
      try Data((quote + "\r\n\n").utf8).write(to: file)
      let fromFile = try CLI.run(common + ["--text-file", file.path])
      #expect(fromFile.status == 0, "stderr: \(fromFile.stderr)")
      #expect(fromFile.stdout == reference.stdout, "--text-file draws what the file holds")
      let fileFromStdin = try CLI.run(common + ["--text-file", "-"], stdin: Array(quote.utf8))
      #expect(fileFromStdin.stdout == reference.stdout, "\(fileFromStdin.stderr)")

      let dash = folder.appendingPathComponent("dash.txt")
      try Data("-\n".utf8).write(to: dash)
      let dashCard = try CLI.run(common + ["--text-file", dash.path, "--verbose"])
      #expect(dashCard.status == 0, "stderr: \(dashCard.stderr)")
      #expect(dashCard.stderr.contains("custom text \"-\" — Me"), "\(dashCard.stderr)")
    }
  }

  /// What `--text -` and `--text-file` cannot take: one line and the documented status each.
  @Test func textInputThatCannotBeUsed() throws {
    try withTemporaryFolder { folder in
      let common = ["render", "--out", "-", "--size", "300x200", "--seed", "1"]
      func expectOneLine(_ result: CommandResult, status: Int32, _ expected: String) {
        #expect(result.status == status, "\(result.status): \(result.stderr)")
        #expect(result.stderrLines == ["innerpeace: error: \(expected)"], "\(result.stderr)")
        #expect(result.stdout.isEmpty)
      }
      let missing = folder.appendingPathComponent("missing.txt").path
      expectOneLine(
        try CLI.run(common + ["--text-file", missing]), status: 66,
        "cannot read --text-file '\(missing)': No such file or directory")
      let notUTF8 = folder.appendingPathComponent("latin1.txt")
      try Data([0x63, 0x61, 0x66, 0xE9]).write(to: notUTF8)
      expectOneLine(
        try CLI.run(common + ["--text-file", notUTF8.path]), status: 65,
        "--text-file '\(notUTF8.path)' is not valid UTF-8")
      expectOneLine(
        try CLI.run(common + ["--text", "-"], stdin: [0xFF, 0x0A]), status: 65, "--text -: stdin is not valid UTF-8")
      let huge = Array(repeating: UInt8(ascii: "a"), count: Limits.maximumTextBytes + 3)
      let over = try CLI.run(common + ["--text", "-"], stdin: huge)
      #expect(over.status == 64 && over.stderrLines.count == 1, "\(over.stderr)")
      #expect(over.stderr.contains("over \(Limits.maximumTextBytes) bytes"), "\(over.stderr)")
      // Within the bytes but over the characters: the core's check, as for --text.
      let long = try CLI.run(
        common + ["--text", "-"], stdin: Array(repeating: UInt8(ascii: "a"), count: Limits.maximumTextCharacters + 1))
      let longArgument = try CLI.run(
        common + ["--text", String(repeating: "a", count: Limits.maximumTextCharacters + 1)])
      #expect(long.status == longArgument.status && long.stderr == longArgument.stderr, "\(long.stderr)")
      let both = try CLI.run(common + ["--text", "a", "--text-file", missing])
      #expect(both.status == 64 && both.stderrLines.count == 1, "\(both.stderr)")
      let folderAsFile = try CLI.run(common + ["--text-file", folder.path])
      #expect(folderAsFile.status == 66 && folderAsFile.stderrLines.count == 1, "\(folderAsFile.stderr)")
    }
  }

  /// `--text` and `--author` get typographic punctuation unless `--straight-quotes` is given;
  /// `--verbose` shows the text as drawn.
  @Test func punctuationIsTypographicUnlessStraightQuotes() throws {
    let arguments = [
      "render", "--out", "-", "--size", "400x300", "--seed", "1", "--text", #""It's time" -- now..."#, "--author",
      "O'Brien", "--verbose",
    ]
    let typographic = try CLI.run(arguments)
    #expect(typographic.status == 0, "stderr: \(typographic.stderr)")
    #expect(typographic.stderr.contains("“It’s time” — now…"), "stderr: \(typographic.stderr)")
    #expect(typographic.stderr.contains("O’Brien"), "stderr: \(typographic.stderr)")

    let straight = try CLI.run(arguments + ["--straight-quotes"])
    #expect(straight.status == 0, "stderr: \(straight.stderr)")
    #expect(straight.stderr.contains(#""It's time" -- now..."#), "stderr: \(straight.stderr)")
    #expect(straight.stderr.contains("O'Brien"), "stderr: \(straight.stderr)")
    #expect(straight.stdout != typographic.stdout, "the drawn text differs")
  }

  // MARK: Help

  @Test func helpListsEveryOption() throws {
    let result = try CLI.run(["render", "--help"])
    #expect(result.status == 0)
    let help = String(decoding: result.stdout, as: UTF8.self) + result.stderr
    for option in [
      "--out", "--preset", "--size", "--quote", "--text", "--text-file", "--author", "--picture", "--seed", "--catalog",
      "--format",
      "--no-author", "--align", "--transparent", "--straight-quotes",
    ] {
      #expect(help.contains(option), "render --help does not mention \(option)")
    }
    for value in ["png", "jpeg", "webp", "avif", "natural", "center", "classic", "og", "square", "story"] {
      #expect(help.contains(value), "render --help does not mention \(value)")
    }

    let top = try CLI.run(["--help"])
    #expect(top.status == 0)
    #expect(String(decoding: top.stdout, as: UTF8.self).contains("render"))
  }

  // MARK: Bad input

  /// One bad invocation: it must fail with one line naming the problem, and touch nothing.
  struct BadInput: Sendable, CustomTestStringConvertible {
    let name: String
    /// Arguments; `{catalog}` becomes the catalog folder, `{out}` the output file.
    let arguments: [String]
    /// Builds the catalog folder's files (quotes.json, pictures.json, photos).
    var catalog: @Sendable (URL) throws -> Void = { _ in }
    /// Each must appear in the error line (case-insensitive).
    let mentions: [String]
    /// The expected sysexits status.
    let status: Int32
    var testDescription: String { name }
  }

  static func catalog(
    quotes: String = #"[{"text": "Be still.", "author": "Psalm 46"}]"#, pictures: String = #"["photo.jpg"]"#,
    extra: [String: [UInt8]] = [:]
  ) -> @Sendable (URL) throws -> Void {
    { folder in
      try Data(quotes.utf8).write(to: folder.appendingPathComponent("quotes.json"))
      try Data(pictures.utf8).write(to: folder.appendingPathComponent("pictures.json"))
      try Data(contentsOf: RenderCommandTests.photo).write(to: folder.appendingPathComponent("photo.jpg"))
      for (name, bytes) in extra { try Data(bytes).write(to: folder.appendingPathComponent(name)) }
    }
  }

  static let brokenPNG: [UInt8] =
    pngSignature + [0, 0, 0, 13] + Array("IHDR".utf8) + [0, 0, 1, 0, 0, 0, 1, 0, 8, 2, 0, 0, 0, 1, 2, 3, 4]
    + [UInt8](repeating: 0x5A, count: 200)

  /// The bundled photo cut to 30 % of its bytes: its header is whole, its image data is not.
  static let cutPhoto: [UInt8] = {
    let bytes = (try? [UInt8](Data(contentsOf: photo))) ?? []
    return Array(bytes.prefix(bytes.count * 3 / 10))
  }()

  static let badInputs: [BadInput] = [
    BadInput(
      name: "malformed quotes.json", arguments: ["--catalog", "{catalog}"],
      catalog: catalog(quotes: "[\n  {\"text\": \"a\", \"author\": \"b\"},\n  {\"text\": x}\n]"),
      mentions: ["quotes.json", "line 3", "column 12"], status: 65),
    BadInput(
      name: "empty quotes list", arguments: ["--catalog", "{catalog}"], catalog: catalog(quotes: "[]"),
      mentions: ["quotes.json", "empty"], status: 65),
    BadInput(
      name: "missing text field", arguments: ["--catalog", "{catalog}"],
      catalog: catalog(quotes: #"[{"author": "b"}]"#),
      mentions: ["quotes.json", "\"text\""], status: 65),
    BadInput(
      name: "missing author field", arguments: ["--catalog", "{catalog}"],
      catalog: catalog(quotes: #"[{"text": "a"}]"#),
      mentions: ["quotes.json", "\"author\""], status: 65),
    BadInput(
      name: "whitespace-only quote", arguments: ["--catalog", "{catalog}"],
      catalog: catalog(quotes: #"[{"text": "  ", "author": "b"}]"#), mentions: ["quotes.json", "empty"], status: 65),
    // `render` checks the photo it draws (``renderChecksOnlyThePhotoItDraws()``).
    BadInput(
      name: "missing picture file", arguments: ["--catalog", "{catalog}", "--picture", "gone.jpg"],
      catalog: catalog(pictures: #"["photo.jpg", "gone.jpg"]"#), mentions: ["gone.jpg", "missing"], status: 66),
    BadInput(
      name: "undecodable picture", arguments: ["--catalog", "{catalog}", "--picture", "notes.jpg"],
      catalog: catalog(pictures: #"["photo.jpg", "notes.jpg"]"#, extra: ["notes.jpg": Array("hello".utf8)]),
      mentions: ["notes.jpg", "decode"], status: 65),
    BadInput(
      name: "picture whose body is broken", arguments: ["--catalog", "{catalog}", "--picture", "broken.png"],
      catalog: catalog(pictures: #"["broken.png"]"#, extra: ["broken.png": brokenPNG]),
      mentions: ["broken.png", "decode"],
      status: 65),
    BadInput(
      name: "picture cut to 30 %", arguments: ["--catalog", "{catalog}", "--picture", "cut.jpg"],
      catalog: catalog(pictures: #"["photo.jpg", "cut.jpg"]"#, extra: ["cut.jpg": cutPhoto]),
      mentions: ["cut.jpg", "decode"], status: 65),
    BadInput(
      name: "picture that is a FIFO", arguments: ["--catalog", "{catalog}", "--picture", "x.jpg"],
      catalog: { folder in
        try catalog(pictures: #"["photo.jpg", "x.jpg"]"#)(folder)
        guard mkfifo(folder.appendingPathComponent("x.jpg").path, 0o600) == 0 else { throw POSIXError(.EIO) }
      },
      mentions: ["x.jpg", "regular file"], status: 65),
    BadInput(
      name: "picture name with / in pictures.json", arguments: ["--catalog", "{catalog}"],
      catalog: catalog(pictures: #"["photo.jpg", "../photo.jpg"]"#), mentions: ["../photo.jpg", "plain file name"],
      status: 64),
    BadInput(
      name: "picture name .. in pictures.json", arguments: ["--catalog", "{catalog}"],
      catalog: catalog(pictures: #"[".."]"#), mentions: ["'..'", "plain file name"], status: 64),
    BadInput(
      name: "--picture with /", arguments: ["--picture", "../Resources/aqua.jpg"],
      mentions: ["../Resources/aqua.jpg", "plain file name"], status: 64),
    BadInput(name: "--picture ..", arguments: ["--picture", ".."], mentions: ["plain file name"], status: 64),
    BadInput(name: "unknown --picture", arguments: ["--picture", "nope.jpg"], mentions: ["nope.jpg"], status: 64),
    BadInput(
      name: "missing catalog folder", arguments: ["--catalog", "/nonexistent-innerpeace-catalog"],
      mentions: ["/nonexistent-innerpeace-catalog"], status: 66),
    BadInput(name: "--quote 99999", arguments: ["--quote", "99999"], mentions: ["99999", "out of range"], status: 64),
    BadInput(name: "--quote=-1", arguments: ["--quote=-1"], mentions: ["-1", "whole number"], status: 64),
    // The service's grammar of numbers (issue 19): no sign, no leading zero.
    BadInput(name: "--quote +1", arguments: ["--quote", "+1"], mentions: ["+1", "whole number"], status: 64),
    BadInput(name: "--quote 01", arguments: ["--quote", "01"], mentions: ["01", "whole number"], status: 64),
    BadInput(name: "--seed 07", arguments: ["--seed", "07"], mentions: ["07", "whole number"], status: 64),
    BadInput(name: "--preset OG", arguments: ["--preset", "OG"], mentions: ["OG"], status: 64),
    BadInput(name: "--size 300X200", arguments: ["--size", "300X200"], mentions: ["300X200"], status: 64),
    BadInput(name: "--quote -1", arguments: ["--quote", "-1"], mentions: ["quote"], status: 64),
    BadInput(name: "--quote abc", arguments: ["--quote", "abc"], mentions: ["abc"], status: 64),
    BadInput(name: "--text blank", arguments: ["--text", "   "], mentions: ["text", "empty"], status: 64),
    BadInput(
      name: "--text over the limit",
      arguments: ["--text", String(repeating: "a", count: Limits.maximumTextCharacters + 1)],
      mentions: ["5001", "limit"], status: 64),
    BadInput(name: "--author without --text", arguments: ["--author", "Me"], mentions: ["--author"], status: 64),
    BadInput(
      name: "--quote and --text", arguments: ["--quote", "1", "--text", "x"], mentions: ["--quote", "--text"],
      status: 64),
    BadInput(name: "--preset nope", arguments: ["--preset", "nope"], mentions: ["nope"], status: 64),
    BadInput(
      name: "--preset and --size", arguments: ["--preset", "og", "--size", "300x200"],
      mentions: ["--preset", "--size"], status: 64),
    BadInput(name: "--format gif", arguments: ["--format", "gif"], mentions: ["gif"], status: 64),
    BadInput(name: "--size 0x100", arguments: ["--size", "0x100"], mentions: ["width 0"], status: 64),
    BadInput(name: "--size=-3x100", arguments: ["--size=-3x100"], mentions: ["-3"], status: 64),
    BadInput(name: "--size -3x100", arguments: ["--size", "-3x100"], mentions: ["size"], status: 64),
    BadInput(name: "--size abcx10", arguments: ["--size", "abcx10"], mentions: ["abc"], status: 64),
    BadInput(name: "--size 99999x99999", arguments: ["--size", "99999x99999"], mentions: ["99999"], status: 64),
    BadInput(name: "--size 100", arguments: ["--size", "100"], mentions: ["WxH"], status: 64),
    BadInput(name: "--align sideways", arguments: ["--align", "sideways"], mentions: ["sideways"], status: 64),
    BadInput(name: "--seed -1", arguments: ["--seed=-1"], mentions: ["seed"], status: 64),
    BadInput(
      name: "--transparent --format jpeg", arguments: ["--transparent", "--format", "jpeg"], mentions: ["JPEG"],
      status: 64),
    BadInput(
      name: "--transparent to .jpg", arguments: ["--transparent", "--out", "{folder}/card.jpg"], mentions: ["JPEG"],
      status: 64),
    BadInput(name: "unknown option", arguments: ["--frobnicate"], mentions: ["frobnicate"], status: 64),
    BadInput(name: "--out is a folder", arguments: ["--out", "{folder}"], mentions: ["directory"], status: 73),
  ]

  /// `render` reads and checks only the photo it draws: a catalog with broken photos still draws
  /// its good ones, and drawing a broken one fails with the one line and status that `batch`,
  /// which checks every photo before it renders, gives at start for that photo.
  @Test func renderChecksOnlyThePhotoItDraws() throws {
    try withTemporaryFolder { root in
      func makeCatalog(_ label: String, pictures: String) throws -> URL {
        let folder = root.appendingPathComponent(label, isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Self.catalog(pictures: pictures, extra: ["notes.jpg": Array("hello".utf8)])(folder)
        guard mkfifo(folder.appendingPathComponent("pipe.jpg").path, 0o600) == 0 else { throw POSIXError(.EIO) }
        return folder
      }
      let all = try makeCatalog("all", pictures: #"["gone.jpg", "notes.jpg", "pipe.jpg", "photo.jpg"]"#)
      let good = try CLI.run([
        "render", "--catalog", all.path, "--picture", "photo.jpg", "--size", "320x200", "--seed", "1", "--out", "-",
      ])
      #expect(good.status == 0, "stderr: \(good.stderr)")
      #expect(good.stderr.isEmpty)
      #expect(pngHeader(good.stdout) != nil, "not a PNG")

      for name in ["gone.jpg", "notes.jpg", "pipe.jpg"] {
        let drawn = try CLI.run([
          "render", "--catalog", all.path, "--picture", name, "--size", "320x200", "--seed", "1", "--out", "-",
        ])
        let single = try makeCatalog(name + "-only", pictures: "[\"photo.jpg\", \"\(name)\"]")
        let batch = try CLI.run([
          "batch", "--catalog", single.path, "--out-dir", root.appendingPathComponent(name + "-cards").path,
          "--count", "1", "--preset", "320x200", "--seed", "1",
        ])
        #expect(batch.status != 0, "batch started with \(name) broken")
        #expect(drawn.status == batch.status, "\(name): render \(drawn.status), batch \(batch.status)")
        #expect(drawn.stderrLines.count == 1, "\(name): \(drawn.stderr)")
        #expect(drawn.stderrLines == batch.stderrLines, "\(name): render '\(drawn.stderr)', batch '\(batch.stderr)'")
        #expect(drawn.stderr.contains(name))
        #expect(drawn.stdout.isEmpty)
      }
    }
  }

  @Test(arguments: badInputs)
  func badInputFailsCleanly(_ bad: BadInput) throws {
    try withTemporaryFolder { root in
      let catalogFolder = root.appendingPathComponent("catalog", isDirectory: true)
      let outFolder = root.appendingPathComponent("out", isDirectory: true)
      try FileManager.default.createDirectory(at: catalogFolder, withIntermediateDirectories: true)
      try FileManager.default.createDirectory(at: outFolder, withIntermediateDirectories: true)
      try bad.catalog(catalogFolder)
      let out = outFolder.appendingPathComponent("card.png")
      let previous = Data("a previous card, not to be touched\n".utf8)
      try previous.write(to: out)
      let outputBefore = listing(outFolder)
      let catalogBefore = listing(catalogFolder)

      var arguments = ["render"]
      if !bad.arguments.contains("--out") { arguments += ["--out", out.path] }
      arguments += bad.arguments.map {
        $0.replacingOccurrences(of: "{catalog}", with: catalogFolder.path).replacingOccurrences(
          of: "{folder}", with: outFolder.path)
      }
      if !bad.arguments.contains(where: { $0.hasPrefix("--seed") }) { arguments += ["--seed", "1"] }
      let result = try CLI.run(arguments)

      #expect(result.status != 0, "succeeded: \(result.stderr)")
      #expect(result.status == bad.status, "exit status \(result.status), expected \(bad.status): \(result.stderr)")
      #expect(result.stderrLines.count == 1, "stderr is not one line: \(result.stderr.debugDescription)")
      let line = String(result.stderrLines.first ?? "")
      #expect(line.hasPrefix("innerpeace: error: "), "\(line)")
      for mention in bad.mentions {
        #expect(line.localizedCaseInsensitiveContains(mention), "'\(line)' does not mention \(mention)")
      }
      #expect(result.stdout.isEmpty, "stdout got \(result.stdout.count) bytes")
      #expect(try Data(contentsOf: out) == previous, "the existing output file was changed")
      #expect(listing(outFolder) == outputBefore, "output folder changed: \(listing(outFolder))")
      #expect(listing(catalogFolder) == catalogBefore)
    }
  }

  // MARK: Outputs that cannot be written

  static func expectCleanFailure(
    _ result: CommandResult, mentions: [String], sourceLocation: SourceLocation = #_sourceLocation
  ) {
    #expect(result.status == 73, "exit status \(result.status): \(result.stderr)", sourceLocation: sourceLocation)
    #expect(
      result.stderrLines.count == 1, "stderr is not one line: \(result.stderr.debugDescription)",
      sourceLocation: sourceLocation)
    let line = String(result.stderrLines.first ?? "")
    #expect(line.hasPrefix("innerpeace: error: "), "\(line)", sourceLocation: sourceLocation)
    for mention in mentions {
      #expect(
        line.localizedCaseInsensitiveContains(mention), "'\(line)' does not mention \(mention)",
        sourceLocation: sourceLocation)
    }
    #expect(result.stdout.isEmpty, sourceLocation: sourceLocation)
  }

  @Test func outputInAMissingFolder() throws {
    try withTemporaryFolder { root in
      let out = root.appendingPathComponent("missing/card.png")
      let result = try CLI.run(["render", "--out", out.path, "--seed", "1"])
      Self.expectCleanFailure(result, mentions: [out.path, "does not exist"])
      #expect(listing(root).isEmpty)
    }
  }

  @Test func outputUnderARegularFile() throws {
    try withTemporaryFolder { root in
      let file = root.appendingPathComponent("file.txt")
      try Data("not a folder".utf8).write(to: file)
      let out = file.appendingPathComponent("card.png")
      let result = try CLI.run(["render", "--out", out.path, "--seed", "1"])
      Self.expectCleanFailure(result, mentions: [out.path])
      #expect(listing(root) == ["file.txt"])
      #expect(try Data(contentsOf: file) == Data("not a folder".utf8))
    }
  }

  @Test func outputInAReadOnlyFolder() throws {
    if runningAsRoot {
      // Root writes through chmod 0555, so use a folder no one can create files in: procfs.
      let out = "/proc/innerpeace-\(UUID().uuidString).png"
      let result = try CLI.run(["render", "--out", out, "--seed", "1", "--size", "300x200"])
      Self.expectCleanFailure(result, mentions: [out])
      #expect(!FileManager.default.fileExists(atPath: out))
    } else {
      try withTemporaryFolder { root in
        let folder = root.appendingPathComponent("readonly", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let existing = folder.appendingPathComponent("card.png")
        try Data("keep".utf8).write(to: existing)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: folder.path)
        let result = try CLI.run(["render", "--out", existing.path, "--seed", "1", "--size", "300x200"])
        Self.expectCleanFailure(result, mentions: [existing.path])
        #expect(listing(folder) == ["card.png"])
        #expect(try Data(contentsOf: existing) == Data("keep".utf8))
      }
    }
  }

  @Test func stdoutThatCannotBeWrittenFailsCleanly() throws {
    // `--out -` with stdout closed to writing (/dev/full): one error line, non-zero status.
    guard let binary = innerpeaceBinary else { throw CLI.Missing() }
    try #require(FileManager.default.fileExists(atPath: "/dev/full"), "this test needs /dev/full")
    let process = Process()
    process.executableURL = binary
    process.arguments = ["render", "--out", "-", "--seed", "1", "--size", "300x200"]
    process.standardOutput = FileHandle(forWritingAtPath: "/dev/full")
    let errors = Pipe()
    process.standardError = errors
    try process.run()
    let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus != 0)
    let lines = stderr.split(separator: "\n")
    #expect(lines.count == 1 && lines.first?.hasPrefix("innerpeace: error: ") == true, "\(stderr)")
  }

  /// `--out -` with a terminal as stdout would fill the terminal with PNG bytes: refused, before
  /// any rendering, with one line.
  @Test(.enabled(if: ExternalTool.scriptAvailable, "needs util-linux script for a terminal"))
  func stdoutOnATerminalIsRefused() throws {
    let (status, output) = try ExternalTool.runOnTerminalWithStatus([
      "render", "--out", "-", "--seed", "1", "--size", "300x200",
    ])
    #expect(status == 64, "\(output)")
    let lines = output.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n")
    #expect(lines.count == 1, "\(output.debugDescription)")
    #expect(lines.first?.hasPrefix("innerpeace: error: ") == true && output.contains("terminal"), "\(output)")
    #expect(!output.contains("PNG"), "image bytes reached the terminal")
  }

  // MARK: Arguments that are not UTF-8

  /// Bytes that are not UTF-8 reach the binary through a shell (Foundation's `Process` takes only
  /// Swift strings). Swift would turn them into U+FFFD and draw that; they must be refused instead.
  @Test(arguments: [
    (["render", "--text", "BAD", "--size", "300x200"], "--text"),
    (["render", "--text=BAD", "--size", "300x200"], "--text"),
    (["render", "--text", "fine", "--author", "BAD", "--size", "300x200"], "--author"),
  ])
  func argumentThatIsNotUTF8IsRefused(_ arguments: [String], option: String) throws {
    guard let binary = innerpeaceBinary else { throw CLI.Missing() }
    try withTemporaryFolder { folder in
      let out = folder.appendingPathComponent("card.png")
      // The shell replaces BAD with "ab", the byte 0xFF, then "cd".
      let quoted = arguments.map { "'\($0.replacingOccurrences(of: "BAD", with: "'\"$bad\"'"))'" }
      let script =
        "bad=$(printf 'ab\\377cd'); exec '\(binary.path)' \(quoted.joined(separator: " ")) --out '\(out.path)'"
      let result = try ExternalTool.run("/bin/sh", ["-c", script])
      #expect(result.status == 64, "exit status \(result.status): \(result.stderr)")
      #expect(
        result.stderrLines == ["innerpeace: error: the value of \(option) is not valid UTF-8"], "\(result.stderr)")
      #expect(listing(folder).isEmpty, "\(listing(folder))")
    }
  }
}
