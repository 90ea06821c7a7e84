import Foundation
import Testing

@testable import InnerPeace

@Suite("Catalog and parsing")
struct CatalogTests {
  static let goodQuotes = #"[{"text": "Be still.", "author": "Psalm 46"}]"#
  static let goodPictures = #"["photo.jpg"]"#

  /// A catalog folder with the given files; `photo.jpg` is a real bundled photo unless replaced.
  static func withCatalog<T>(
    quotes: String = goodQuotes, pictures: String = goodPictures, files: [String: [UInt8]] = [:],
    _ body: (URL) throws -> T
  ) throws -> T {
    try withTemporaryFolder("innerpeace-catalog") { folder in
      try folder.writeText(quotes, to: "quotes.json")
      try folder.writeText(pictures, to: "pictures.json")
      try folder.writeBytes(try bundledPhotoBytes(), to: "photo.jpg")
      for (name, bytes) in files { try folder.writeBytes(bytes, to: name) }
      return try body(folder)
    }
  }

  static func loadError(
    quotes: String = goodQuotes, pictures: String = goodPictures, files: [String: [UInt8]] = [:],
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> InnerPeaceError? {
    try withCatalog(quotes: quotes, pictures: pictures, files: files) { folder in
      innerPeaceError(sourceLocation: sourceLocation) { try Catalog(directory: folder) }
    }
  }

  @Test func goodCatalogLoads() throws {
    try Self.withCatalog { folder in
      let catalog = try Catalog(directory: folder)
      #expect(catalog.quotes == [Quote(text: "Be still.", author: "Psalm 46")])
      #expect(catalog.pictures == ["photo.jpg"])
      #expect(try catalog.pictureURL(named: "photo.jpg") == folder.appendingPathComponent("photo.jpg"))
    }
  }

  // MARK: Malformed JSON: line and column

  @Test func malformedQuotesReportLineAndColumn() throws {
    let json = """
      [
        {
          "text": ?,
          "author": "b"
        }
      ]
      """
    let error = try Self.loadError(quotes: json)
    guard case .catalogMalformed(let file, let line, let column, let reason)? = error else {
      Issue.record("expected catalogMalformed, got \(String(describing: error))")
      return
    }
    #expect(file.hasSuffix("quotes.json"))
    #expect(line == 3)
    #expect(column == 13)
    #expect(!reason.isEmpty)
    let description = error!.description
    #expect(description.contains("quotes.json") && description.contains("line 3") && description.contains("column 13"))
    #expect(!description.contains("\n"))
  }

  struct MalformedCase: Sendable, CustomTestStringConvertible {
    let name: String
    let json: String
    let line: Int
    /// Where the error is reported; a range where pointing at the token or just past it are both fair.
    let columns: ClosedRange<Int>
    init(name: String, json: String, line: Int, column: Int) {
      self.init(name: name, json: json, line: line, columns: column...column)
    }
    init(name: String, json: String, line: Int, columns: ClosedRange<Int>) {
      self.name = name
      self.json = json
      self.line = line
      self.columns = columns
    }
    var testDescription: String { name }
  }

  @Test(arguments: [
    MalformedCase(
      name: "missing comma between objects",
      json: "[\n  {\"text\": \"a\", \"author\": \"b\"}\n  {\"text\": \"c\", \"author\": \"d\"}\n]", line: 3, column: 3),
    // (A trailing comma is not tested: Foundation's parser accepts it.)
    MalformedCase(name: "single quotes", json: "[{'text': 'a'}]", line: 1, column: 3),
    MalformedCase(name: "unterminated string", json: "[\n{\"text\": \"never ends", line: 2, column: 21),
    MalformedCase(
      name: "raw line break in a string", json: "[{\"text\": \"two\nlines\", \"author\": \"x\"}]", line: 1, column: 15),
    MalformedCase(name: "bad literal", json: "[\n  nul\n]", line: 2, columns: 3...6),
    MalformedCase(
      name: "column counts characters, not bytes", json: "[{\"text\": \"é — 静\", \"author\": x}]", line: 1, column: 30),
    MalformedCase(
      name: "CRLF line endings", json: "[\r\n  {\"text\": \"a\",\r\n   \"author\" \"b\"}\r\n]", line: 3, column: 13),
    MalformedCase(name: "empty file", json: "", line: 1, column: 1),
    MalformedCase(name: "text after the value", json: "[]\n\n]", line: 3, column: 1),
    MalformedCase(
      name: "bad unicode escape", json: "[\n {\"text\": \"\\uZZZZ\", \"author\": \"b\"}]", line: 2, columns: 12...14),
    MalformedCase(
      name: "leading zero", json: "[\n {\"text\": \"a\", \"author\": \"b\", \"n\": 01}]", line: 2, columns: 36...37),
    // Foundation keeps one of two equal keys without a word; the catalog refuses them.
    MalformedCase(
      name: "duplicate key", json: "[\n {\"text\": \"a\",\n  \"author\": \"b\",\n  \"text\": \"c\"}]", line: 4,
      column: 3),
    MalformedCase(
      name: "duplicate key spelt with an escape",
      json: "[{\"text\": \"a\", \"author\": \"b\"},\n {\"author\": \"c\", \"te\\u0078t\": \"d\", \"text\": \"e\"}]",
      line: 2,
      column: 36),
  ])
  func malformedJSONIsLocated(_ malformed: MalformedCase) throws {
    let error = try Self.loadError(quotes: malformed.json)
    guard case .catalogMalformed(_, let line, let column, _)? = error else {
      Issue.record("expected catalogMalformed, got \(String(describing: error))")
      return
    }
    #expect(line == malformed.line && malformed.columns.contains(column), "\(error!.description)")
  }

  @Test func duplicateKeyNamesTheKey() throws {
    let error = try Self.loadError(quotes: "[{\"text\": \"a\", \"author\": \"b\", \"author\": \"c\"}]")
    #expect(error?.description.contains("duplicate key \"author\"") == true, "\(String(describing: error))")
  }

  /// JSON in UTF-16 or UTF-32 is read as the same text in UTF-8: a valid one loads, and a key
  /// spelt twice, once with an escape, is refused and named as in UTF-8 (before issue 17 the
  /// escaped duplicate passed in UTF-16, and a plain one was named with NUL bytes).
  @Test(arguments: [
    String.Encoding.utf16, .utf16LittleEndian, .utf16BigEndian, .utf32, .utf32LittleEndian, .utf32BigEndian,
  ])
  func otherUnicodeEncodingsAreReadAsUTF8(_ encoding: String.Encoding) throws {
    func bytes(_ text: String) -> [UInt8] { Array(text.data(using: encoding)!) }
    try Self.withCatalog(files: ["quotes.json": bytes("[{\"text\": \"Be still — 静\", \"author\": \"Psalm 46\"}]")]) {
      folder in
      let catalog = try Catalog(directory: folder)
      #expect(catalog.quotes == [Quote(text: "Be still — 静", author: "Psalm 46")])
    }
    for quotes in [
      "[{\"text\": \"a\",\n \"author\": \"b\", \"\\u0074ext\": \"c\"}]",
      "[{\"text\": \"a\",\n \"author\": \"b\", \"text\": \"c\"}]",
    ] {
      let error = try Self.loadError(files: ["quotes.json": bytes(quotes)])
      guard case .catalogMalformed(_, let line, let column, let reason)? = error else {
        Issue.record("\(encoding): expected catalogMalformed, got \(String(describing: error))")
        continue
      }
      #expect(reason == "duplicate key \"text\" in object" && line == 2 && column == 17, "\(encoding): \(error!)")
    }
  }

  @Test func sameKeysInDifferentObjectsAreFine() throws {
    try Self.withCatalog(quotes: "[{\"text\": \"a\", \"author\": \"a\"}, {\"text\": \"a\", \"author\": \"a\"}]") {
      folder in
      let catalog = try Catalog(directory: folder)
      #expect(catalog.quotes.count == 2)
    }
  }

  @Test func malformedPicturesReportTheirFile() throws {
    let error = try Self.loadError(pictures: "[\n  \"photo.jpg\"\n  \"other.jpg\"\n]")
    guard case .catalogMalformed(let file, 3, 3, _)? = error else {
      Issue.record("expected catalogMalformed at 3:3 in pictures.json, got \(String(describing: error))")
      return
    }
    #expect(file.hasSuffix("pictures.json"))
  }

  // MARK: Wrong shape or bad values

  struct InvalidCase: Sendable, CustomTestStringConvertible {
    let name: String
    var quotes: String = CatalogTests.goodQuotes
    var pictures: String = CatalogTests.goodPictures
    let file: String
    let fragments: [String]
    var testDescription: String { name }
  }

  @Test(arguments: [
    InvalidCase(name: "empty quotes", quotes: "[]", file: "quotes.json", fragments: ["empty"]),
    InvalidCase(name: "empty pictures", pictures: "[ ]", file: "pictures.json", fragments: ["empty"]),
    InvalidCase(
      name: "quotes not an array", quotes: #"{"text": "a", "author": "b"}"#, file: "quotes.json", fragments: ["array"]),
    InvalidCase(name: "pictures not an array", pictures: #""photo.jpg""#, file: "pictures.json", fragments: ["array"]),
    InvalidCase(
      name: "missing text", quotes: #"[{"text": "a", "author": "b"}, {"author": "c"}]"#, file: "quotes.json",
      fragments: ["quote 1", "\"text\""]),
    InvalidCase(
      name: "missing author", quotes: #"[{"text": "a"}]"#, file: "quotes.json", fragments: ["quote 0", "\"author\""]),
    InvalidCase(
      name: "text not a string", quotes: #"[{"text": 5, "author": "b"}]"#, file: "quotes.json",
      fragments: ["\"text\"", "string"]),
    InvalidCase(
      name: "quote not an object", quotes: #"["just text"]"#, file: "quotes.json", fragments: ["quote 0", "object"]),
    InvalidCase(
      name: "whitespace-only quote",
      quotes: "[{\"text\": \"a\", \"author\": \"b\"}, {\"text\": \" \\t\\n \", \"author\": \"c\"}]",
      file: "quotes.json", fragments: ["quote 1", "empty"]),
    InvalidCase(
      name: "empty quote", quotes: #"[{"text": "", "author": "b"}]"#, file: "quotes.json",
      fragments: ["quote 0", "empty"]),
    InvalidCase(
      name: "quote of invisible characters only",
      quotes: #"[{"text": "a", "author": "b"}, {"text": "\u200b\u2060\ufeff\u3164\u2800\u00ad", "author": "c"}]"#,
      file: "quotes.json", fragments: ["quote 1", "empty or has nothing visible"]),
    InvalidCase(
      name: "quote of a thousand bidi controls",
      quotes: "[{\"text\": \"\(String(repeating: "\\u202b", count: 1_000))a\", \"author\": \"b\"}]",
      file: "quotes.json", fragments: ["quote 0", "bidi"]),
    InvalidCase(
      name: "quote over the limit",
      quotes: "[{\"text\": \"\(String(repeating: "a", count: 5_001))\", \"author\": \"b\"}]",
      file: "quotes.json", fragments: ["quote 0", "limit"]),
    InvalidCase(
      name: "two-line author", quotes: #"[{"text": "a", "author": "b\nc"}]"#, file: "quotes.json",
      fragments: ["quote 0", "author"]),
    InvalidCase(
      name: "picture not a string", pictures: "[7]", file: "pictures.json", fragments: ["picture 0", "string"]),
  ])
  func invalidCatalogsNameFileAndProblem(_ invalid: InvalidCase) throws {
    let error = try Self.loadError(quotes: invalid.quotes, pictures: invalid.pictures)
    guard case .catalogInvalid(let file, let reason)? = error else {
      Issue.record("expected catalogInvalid, got \(String(describing: error))")
      return
    }
    #expect(file.hasSuffix(invalid.file))
    for fragment in invalid.fragments {
      #expect(reason.localizedCaseInsensitiveContains(fragment), "'\(reason)' does not mention \(fragment)")
    }
    #expect(!error!.description.contains("\n"))
  }

  @Test func missingFilesAreUnreadable() throws {
    try withTemporaryFolder("innerpeace-catalog") { folder in
      let error = innerPeaceError { try Catalog(directory: folder) }
      guard case .catalogUnreadable(let file, _)? = error else {
        Issue.record("expected catalogUnreadable, got \(String(describing: error))")
        return
      }
      #expect(file.hasSuffix("quotes.json"))
    }
  }

  // MARK: Pictures

  @Test func pictureFileMissing() throws {
    let error = try Self.loadError(pictures: #"["photo.jpg", "gone.jpg"]"#)
    #expect(error == .pictureMissing(name: "gone.jpg"))
    #expect(error?.description.contains("gone.jpg") == true)
  }

  @Test(arguments: [
    ("notes.jpg", Array("this is not an image\n".utf8)),
    ("empty.png", []),
    ("truncated.png", Array(pngSignature.prefix(6))),
    ("gif.jpg", Array("GIF89a".utf8) + [UInt8](repeating: 0, count: 64)),
  ])
  func pictureNotAnImage(name: String, bytes: [UInt8]) throws {
    let error = try Self.loadError(pictures: "[\"photo.jpg\", \"\(name)\"]", files: [name: bytes])
    guard case .pictureUndecodable(let reportedName, let reason)? = error else {
      Issue.record("expected pictureUndecodable, got \(String(describing: error))")
      return
    }
    #expect(reportedName == name)
    #expect(!reason.isEmpty)
  }

  /// A catalog that checks its photos when drawn (one card from the command line) loads with
  /// broken photos listed: each is refused when a card draws it, with the error a catalog that
  /// checks at load gives for it, and the good ones draw the cards such a catalog draws.
  @Test func photosCheckedWhenDrawn() throws {
    let notes = Array("this is not an image\n".utf8)
    let plain = try bundledPhotoBytes("dune.jpg")
    let pictures = #"[{"file": "photo.jpg", "focus": [0.25, 1]}, "plain.jpg", "notes.jpg", "gone.jpg"]"#
    try Self.withCatalog(pictures: pictures, files: ["plain.jpg": plain, "notes.jpg": notes]) { folder in
      #expect(innerPeaceError { try Catalog(directory: folder) } != nil)
      let catalog = try Catalog(directory: folder, checking: .whenDrawn)
      #expect(catalog.pictures == ["photo.jpg", "plain.jpg", "notes.jpg", "gone.jpg"])
      let renderer = try CardRenderer(catalog: catalog, backgroundCacheBytes: 0)
      let canvas = Preset.custom(try CanvasSize(width: 480, height: 320))
      for name in ["notes.jpg", "gone.jpg"] {
        let atLoad = try Self.loadError(pictures: "[\"\(name)\"]", files: ["notes.jpg": notes])
        #expect(atLoad != nil)
        let drawn = innerPeaceError {
          try renderer.render(CardRequest(preset: canvas, quote: .index(0), picture: .named(name), seed: 1))
        }
        #expect(drawn == atLoad, "\(name)")
      }
      // The good photos, one with its focus given and one estimated, against a checked-at-load catalog.
      let good = #"[{"file": "photo.jpg", "focus": [0.25, 1]}, "plain.jpg"]"#
      try Self.withCatalog(pictures: good, files: ["plain.jpg": plain]) { goodFolder in
        let checkedAtLoad = try CardRenderer(catalog: try Catalog(directory: goodFolder), backgroundCacheBytes: 0)
        for name in ["photo.jpg", "plain.jpg"] {
          let request = CardRequest(preset: canvas, quote: .index(0), picture: .named(name), seed: 3)
          let card = try renderer.render(request)
          #expect(card.picture == name)
          #expect(card.bytes == (try checkedAtLoad.render(request).bytes), "\(name)")
        }
      }
    }
  }

  @Test(arguments: ["../photo.jpg", "sub/photo.jpg", "/etc/hosts", "..", ".hidden.jpg", ""])
  func pictureNameNotPlain(name: String) throws {
    let json = String(
      data: try JSONSerialization.data(withJSONObject: [name], options: [.fragmentsAllowed]), encoding: .utf8)!
    let error = try Self.loadError(pictures: json)
    #expect(error == .pictureNameInvalid(name: name))
  }

  @Test func valueCatalogChecksPictures() throws {
    try Self.withCatalog { folder in
      let quotes = [Quote(text: "a", author: "b")]
      #expect(
        innerPeaceError { try Catalog(quotes: quotes, pictures: ["nope.jpg"], directory: folder) }
          == .pictureMissing(name: "nope.jpg"))
      #expect(
        innerPeaceError { try Catalog(quotes: quotes, pictures: ["../x.jpg"], directory: folder) }
          == .pictureNameInvalid(name: "../x.jpg"))
      #expect(innerPeaceError { try Catalog(quotes: [], pictures: ["photo.jpg"], directory: folder) } != nil)
      #expect(innerPeaceError { try Catalog(quotes: quotes, pictures: [], directory: folder) } != nil)
      let catalog = try Catalog(quotes: quotes, pictures: ["photo.jpg"], directory: folder)
      #expect(catalog.pictures == ["photo.jpg"])
    }
  }

  /// SPEC §4: an empty or whitespace-only quote is rejected at load. The values initialiser is
  /// the door a server or batch tool uses for its own lists, so it must check quotes as well.
  @Test func valueCatalogChecksQuotes() throws {
    try Self.withCatalog { folder in
      for text in ["", "   \n\t", String(repeating: "a", count: Limits.maximumTextCharacters + 1), "bell\u{7}"] {
        let error = innerPeaceError {
          try Catalog(quotes: [Quote(text: text, author: "b")], pictures: ["photo.jpg"], directory: folder)
        }
        guard case .catalogInvalid? = error else {
          Issue.record("a quote \(text.prefix(12).debugDescription) was accepted: \(String(describing: error))")
          continue
        }
      }
    }
  }

  /// An author of invisible characters only loads as no author, as an empty one does.
  @Test func invisibleAuthorLoadsAsNoAuthor() throws {
    try Self.withCatalog { folder in
      let catalog = try Catalog(
        quotes: [Quote(text: "Be still.", author: "\u{200B}\u{2060}\u{3164}")], pictures: ["photo.jpg"],
        directory: folder)
      #expect(catalog.quotes[0].author == "")
    }
  }

  // MARK: Sizes, presets, formats

  @Test(arguments: [
    "0x100", "-5x100", "abcx100", "100", "5000x5000", "100x0", "199x200", "4097x200", "x100", "100x", "",
    "1600x900x2", "1600 x 900", "+1600x900", "16.5x900", "１６００x９００", "99999999999999999999x100", "4096x4097",
    // The service's grammar, now the command line's too: a lowercase x, no leading zeros.
    "1600X900", "0300x300", "300x0300",
  ])
  func canvasSizeRejects(text: String) {
    let error = innerPeaceError { try CanvasSize(parsing: text) }
    guard case .sizeInvalid(let reason)? = error else {
      Issue.record("expected sizeInvalid for \(text.debugDescription), got \(String(describing: error))")
      return
    }
    #expect(!reason.isEmpty && !reason.contains("\n"))
  }

  @Test func canvasSizeAccepts() throws {
    let size = try CanvasSize(parsing: "1600x900")
    #expect(size.width == 1600 && size.height == 900)
    #expect(size.description == "1600x900")
    #expect(try CanvasSize(parsing: "\(Limits.minimumSide)x\(Limits.minimumSide)").width == Limits.minimumSide)
    #expect(try CanvasSize(parsing: "\(Limits.maximumSide)x\(Limits.maximumSide)").height == Limits.maximumSide)
    #expect(Limits.maximumSide * Limits.maximumSide <= Limits.maximumPixels)
  }

  @Test func presetParsing() throws {
    #expect(try Preset(parsing: "classic") == .classic)
    #expect(try Preset(parsing: "og") == .og)
    #expect(try Preset(parsing: "square") == .square)
    #expect(try Preset(parsing: "story") == .story)
    #expect(try Preset(parsing: "1600x900") == .custom(try CanvasSize(width: 1600, height: 900)))
    #expect(innerPeaceError { try Preset(parsing: "huge") } == .presetUnknown("huge"))
    #expect(innerPeaceError { try Preset(parsing: "") } == .presetUnknown(""))
    // Names as written: the service's grammar and the command line's are one.
    for text in ["OG", "Square", " og", "300X300", "-5x300", "+300x300", "x300"] {
      #expect(innerPeaceError { try Preset(parsing: text) } == .presetUnknown(text), "\(text)")
    }
    guard case .sizeInvalid? = innerPeaceError({ try Preset(parsing: "0300x300") }) else {
      Issue.record("a WxH preset with a leading zero is a size error")
      return
    }
    guard case .sizeInvalid? = innerPeaceError({ try Preset(parsing: "10x10") }) else {
      Issue.record("a WxH preset out of limits is a size error")
      return
    }
    for preset in Preset.named {
      #expect(try Preset(parsing: preset.description) == preset)
    }
  }

  @Test func formatParsing() throws {
    #expect(try ImageFormat(parsing: "png") == .png)
    #expect(try ImageFormat(parsing: "JPG") == .jpeg)
    #expect(try ImageFormat(parsing: "jpeg") == .jpeg)
    #expect(try ImageFormat(parsing: "webp") == .webp)
    #expect(innerPeaceError { try ImageFormat(parsing: "gif") } == .formatUnknown("gif"))
    #expect(innerPeaceError { try ImageFormat(parsing: "") } == .formatUnknown(""))
  }

  /// A catalog past a documented limit is refused at load, with one wording: too many quotes or
  /// pictures (before any photo is read), or a file too large (before it is read).
  /// A file past the count limit is refused by a scan before it is parsed (parsing a million
  /// quotes took 3 GB to refuse them): the count error comes first even when the text breaks
  /// later, where the parse would have found a syntax error.
  @Test func countLimitIsCheckedBeforeTheParse() throws {
    let quote = #"{"text": "Be still, [it, is] {calm}.", "author": "Psalm 46"}"#
    let broken = "[" + Array(repeating: quote, count: CatalogLimits.maximumQuotes + 1).joined(separator: ",") + ",]]"
    let error = try Self.loadError(quotes: broken)
    #expect(
      error.map { $0.description.hasSuffix("quotes.json: 100002 quotes is more than the limit of 100000") } == true,
      "\(String(describing: error))")
    for (text, count) in [
      ("[]", 0), (" [ 1 ] ", 1), ("[{\"a\": [1, 2]}, \"x,y]\\\"\", null]", 3), ("[[], [[]]]", 2),
    ] {
      #expect(JSONPosition.topLevelArrayCount(in: Array(text.utf8)) == count, "\(text)")
    }
    for text in ["{}", "5", "\"a\"", "[] []", ""] {
      #expect(JSONPosition.topLevelArrayCount(in: Array(text.utf8)) == nil, "\(text)")
    }
  }

  @Test func catalogsPastTheLimitsAreRefused() throws {
    let quote = #"{"text": "Be still.", "author": "Psalm 46"}"#
    let many = "[" + Array(repeating: quote, count: CatalogLimits.maximumQuotes + 1).joined(separator: ",") + "]"
    let tooMany = try Self.loadError(quotes: many)
    #expect(
      tooMany.map { $0.description.hasSuffix("quotes.json: 100001 quotes is more than the limit of 100000") } == true,
      "\(String(describing: tooMany))")
    let atLimit = "[" + Array(repeating: quote, count: 1_000).joined(separator: ",") + "]"
    #expect(try Self.withCatalog(quotes: atLimit) { try Catalog(directory: $0).quotes.count } == 1_000)

    // 10,001 pictures, none of which exists: refused by count, not by the first missing file.
    let names = "[" + (0...CatalogLimits.maximumPictures).map { "\"p\($0).jpg\"" }.joined(separator: ",") + "]"
    let pictures = try Self.loadError(pictures: names)
    #expect(
      pictures.map { "\($0)".contains("10001 pictures is more than the limit of 10000") } == true,
      "\(String(describing: pictures))")

    // A quotes.json past 64 MiB (sparse: no bytes written), refused before it is read.
    let large = try Self.withCatalog { folder in
      let handle = try FileHandle(forWritingTo: folder.appendingPathComponent("quotes.json"))
      try handle.truncate(atOffset: UInt64(CatalogLimits.maximumQuotesFileBytes) + 1)
      try handle.close()
      return innerPeaceError { try Catalog(directory: folder) }
    }
    #expect(
      large.map { $0.description.contains("\(CatalogLimits.maximumQuotesFileBytes + 1) bytes is more than the limit") }
        == true, "\(String(describing: large))")

    let values = innerPeaceError {
      try Catalog(
        quotes: Array(repeating: Quote(text: "x", author: ""), count: CatalogLimits.maximumQuotes + 1),
        pictures: ["p.jpg"], directory: URL(fileURLWithPath: "/nonexistent"))
    }
    #expect(values == .catalogInvalid(file: "quotes.json", reason: "100001 quotes is more than the limit of 100000"))
  }

  // MARK: The bundled catalog

  @Test func bundledCatalogLoads() throws {
    let catalog = try Catalog.bundled()
    #expect(catalog.quotes.count >= 100)
    #expect(catalog.pictures.count >= 8)
    #expect(Set(catalog.pictures).count == catalog.pictures.count, "duplicate pictures")
    #expect(Set(catalog.quotes.map(\.text)).count == catalog.quotes.count, "duplicate quotes")
    for quote in catalog.quotes {
      #expect(!quote.text.isEmpty && !quote.author.isEmpty, "\(quote)")
      #expect(quote.text == quote.text.trimmingCharacters(in: .whitespacesAndNewlines))
    }
    for picture in catalog.pictures {
      #expect(FileManager.default.fileExists(atPath: try catalog.pictureURL(named: picture).path))
    }
  }

  @Test func everyBundledQuoteFitsOnOGWithoutTruncation() throws {
    let renderer = Fixtures.renderer
    let bounds = Preset.og.geometry.drawBounds
    for (index, quote) in Fixtures.catalog.quotes.enumerated() {
      let fit = try renderer.fitText(quote.text, author: quote.author, preset: .og)
      #expect(!fit.truncated, "quote \(index) is truncated on og")
      #expect(
        fit.block.x >= Double(bounds.x) - 0.01 && fit.block.y >= Double(bounds.y) - 0.01
          && fit.block.x + fit.block.width <= Double(bounds.x + bounds.width) + 0.01
          && fit.block.y + fit.block.height <= Double(bounds.y + bounds.height) + 0.01,
        "quote \(index) overflows: \(fit.block)")
      #expect(fit.fontSize >= 32, "quote \(index) is set at only \(fit.fontSize) px on og")
    }
  }

  @Test func everyBundledQuoteFitsOnClassicLikeTheApp() throws {
    let renderer = Fixtures.renderer
    for (index, quote) in Fixtures.catalog.quotes.enumerated() {
      // The app's card: no author line.
      let fit = try renderer.fitText(quote.text, author: "", preset: .classic)
      #expect(!fit.truncated, "quote \(index) is truncated on classic")
    }
  }
}
