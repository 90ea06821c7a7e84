import Foundation
import InnerPeace

/// The wire format between the server and its render worker processes (see ``RenderWorker``).
///
/// Every message is one frame: the magic `IPW` and a version byte (1), a kind byte, the header
/// length and the body length (both UInt32, little-endian), the header, then the body. Headers
/// are a small binary encoding of ``CardRequest``, ``RenderedCard``'s facts or an
/// ``InnerPeaceError`` (and one integer in a `resting` frame); only a card has a body, its encoded image bytes, sent as they are.
enum WorkerWire {
  static let magic: [UInt8] = [0x49, 0x50, 0x57, 1]
  /// Magic, kind, header length, body length.
  static let prefixLength = 13
  /// Far above any real header: a request carries at most 20 KB of text, and a card's typeset
  /// report (when asked for) at most a run per character, about 1.4 MB of JSON for 5,000
  /// characters that alternate between two scripts on one line each (``ReportWireTests``).
  static let maximumHeaderLength = 8 << 20
  /// Far above the largest card (a 4096 x 4096 PNG that does not compress: about 64 MiB).
  static let maximumBodyLength = 256 << 20

  enum Kind: UInt8 {
    /// Server to worker: render this ``CardRequest``.
    case request = 1
    /// Worker to server, once, after start-up: the catalog and fonts are loaded.
    case ready = 2
    /// Worker to server: the card (header: its facts; body: its bytes).
    case card = 3
    /// Worker to server: the render failed with an ``InnerPeaceError``.
    case failure = 4
    /// Worker to server, before each answer: the memory it held at rest before the render (see
    /// ``RenderWorker/restingBytes()``), one integer.
    case resting = 5
  }

  /// The 13 bytes before a header.
  static func prefix(_ kind: Kind, headerLength: Int, bodyLength: Int) -> [UInt8] {
    var writer = WireWriter()
    writer.bytes += magic
    writer.u8(kind.rawValue)
    writer.u32(UInt32(headerLength))
    writer.u32(UInt32(bodyLength))
    return writer.bytes
  }

  /// Parses and checks a frame prefix: the kind and the two lengths.
  static func parsePrefix(_ bytes: [UInt8]) throws(WireError) -> (kind: Kind, headerLength: Int, bodyLength: Int) {
    guard bytes.count == prefixLength, Array(bytes[0..<4]) == magic else {
      throw WireError("not a worker frame (bad magic or version)")
    }
    var reader = WireReader(bytes, from: 4)
    guard let kind = Kind(rawValue: try reader.u8()) else { throw WireError("unknown frame kind \(bytes[4])") }
    let headerLength = Int(try reader.u32())
    let bodyLength = Int(try reader.u32())
    guard headerLength <= maximumHeaderLength, bodyLength <= maximumBodyLength else {
      throw WireError("frame too large: header \(headerLength), body \(bodyLength) bytes")
    }
    return (kind, headerLength, bodyLength)
  }

  // MARK: Requests

  static func encode(_ request: CardRequest) -> [UInt8] {
    var writer = WireWriter()
    writer.string(request.preset.description)
    switch request.quote {
    case .random: writer.u8(0)
    case .index(let index):
      writer.u8(1)
      writer.int(index)
    case .text(let text, let author):
      writer.u8(2)
      writer.string(text)
      writer.optionalString(author)
    }
    switch request.picture {
    case .random: writer.u8(0)
    case .named(let name):
      writer.u8(1)
      writer.string(name)
    }
    writer.u64(request.seed)
    writer.string(request.format.rawValue)
    writer.bool(request.showsAuthor)
    writer.string(request.alignment.rawValue)
    writer.bool(request.transparent)
    writer.bool(request.typographicPunctuation)
    writer.int(request.quality ?? 0)
    writer.bool(request.includesReport)
    writer.optionalString(request.language?.description)
    return writer.bytes
  }

  static func decodeRequest(_ bytes: [UInt8]) throws(WireError) -> CardRequest {
    var reader = WireReader(bytes)
    let presetName = try reader.string()
    let preset: Preset
    do { preset = try Preset(parsing: presetName) } catch { throw WireError("bad preset '\(presetName)'") }
    let quote: QuoteChoice
    switch try reader.u8() {
    case 0: quote = .random
    case 1: quote = .index(try reader.int())
    case 2: quote = .text(try reader.string(), author: try reader.optionalString())
    case let tag: throw WireError("bad quote tag \(tag)")
    }
    let picture: PictureChoice
    switch try reader.u8() {
    case 0: picture = .random
    case 1: picture = .named(try reader.string())
    case let tag: throw WireError("bad picture tag \(tag)")
    }
    let seed = try reader.u64()
    guard let format = ImageFormat(rawValue: try reader.string()) else { throw WireError("bad format") }
    let showsAuthor = try reader.bool()
    guard let alignment = TextAlignment(rawValue: try reader.string()) else { throw WireError("bad alignment") }
    let transparent = try reader.bool()
    let typographicPunctuation = try reader.bool()
    let quality = try reader.int()
    let includesReport = try reader.bool()
    let languageTag = try reader.optionalString()
    let language = languageTag.flatMap(LanguageTag.init)
    if languageTag != nil && language == nil { throw WireError("bad language tag") }
    try reader.expectEnd()
    return CardRequest(
      preset: preset, quote: quote, picture: picture, seed: seed, format: format, showsAuthor: showsAuthor,
      alignment: alignment, transparent: transparent, typographicPunctuation: typographicPunctuation,
      quality: quality == 0 ? nil : quality, includesReport: includesReport, language: language)
  }

  // MARK: Cards

  /// The facts of a card, without its bytes (they go in the frame's body).
  static func encodeFacts(_ card: RenderedCard) -> [UInt8] {
    var writer = WireWriter()
    writer.string(card.format.rawValue)
    writer.int(card.size.width)
    writer.int(card.size.height)
    writer.bool(card.quoteIndex != nil)
    writer.int(card.quoteIndex ?? 0)
    writer.string(card.quote.text)
    writer.string(card.quote.author)
    writer.optionalString(card.picture)
    writer.string(card.shareMessage)
    writer.int(card.fontSize)
    writer.bool(card.truncated)
    writer.int(card.layoutPasses)
    writer.int(card.missingGlyphs)
    let timings = card.timings
    for value in [timings.decode, timings.scale, timings.fit, timings.blur, timings.draw, timings.encode] {
      writer.u64(value.bitPattern)
    }
    // The report, only when the request asked for one: an empty optional (five bytes) otherwise.
    writer.optionalString(card.report.map(encodeReport))
    return writer.bytes
  }

  static func decodeCard(facts: [UInt8], bytes: [UInt8]) throws(WireError) -> RenderedCard {
    var reader = WireReader(facts)
    guard let format = ImageFormat(rawValue: try reader.string()) else { throw WireError("bad format") }
    let width = try reader.int()
    let height = try reader.int()
    let size: CanvasSize
    do { size = try CanvasSize(width: width, height: height) } catch { throw WireError("bad size \(width)x\(height)") }
    let hasIndex = try reader.bool()
    let index = try reader.int()
    let quote = Quote(text: try reader.string(), author: try reader.string())
    let picture = try reader.optionalString()
    let shareMessage = try reader.string()
    let fontSize = try reader.int()
    let truncated = try reader.bool()
    let passes = try reader.int()
    let missingGlyphs = try reader.int()
    var timings = StageTimings()
    timings.decode = Double(bitPattern: try reader.u64())
    timings.scale = Double(bitPattern: try reader.u64())
    timings.fit = Double(bitPattern: try reader.u64())
    timings.blur = Double(bitPattern: try reader.u64())
    timings.draw = Double(bitPattern: try reader.u64())
    timings.encode = Double(bitPattern: try reader.u64())
    var report: TypesetReport? = nil
    if let text = try reader.optionalString() { report = try decodeReport(text) }
    try reader.expectEnd()
    return RenderedCard(
      bytes: bytes, format: format, size: size, quoteIndex: hasIndex ? index : nil, quote: quote, picture: picture,
      shareMessage: shareMessage, fontSize: fontSize, truncated: truncated, layoutPasses: passes, timings: timings,
      missingGlyphs: missingGlyphs, report: report)
  }

  /// A report as JSON text (it crosses the wire only when a request asked for it).
  static func encodeReport(_ report: TypesetReport) -> String {
    // Encoding plain strings, numbers and arrays cannot fail.
    String(decoding: (try? JSONEncoder().encode(report)) ?? Data(), as: UTF8.self)
  }

  static func decodeReport(_ text: String) throws(WireError) -> TypesetReport {
    do { return try JSONDecoder().decode(TypesetReport.self, from: Data(text.utf8)) } catch {
      throw WireError("bad report")
    }
  }

  // MARK: Errors

  static func encode(_ error: InnerPeaceError) -> [UInt8] {
    var writer = WireWriter()
    func tag(_ value: UInt8, _ strings: String...) {
      writer.u8(value)
      for string in strings { writer.string(string) }
    }
    switch error {
    case .catalogUnreadable(let file, let reason): tag(0, file, reason)
    case .catalogMalformed(let file, let line, let column, let reason):
      tag(1, file, reason)
      writer.int(line)
      writer.int(column)
    case .catalogInvalid(let file, let reason): tag(2, file, reason)
    case .pictureMissing(let name): tag(3, name)
    case .pictureNameInvalid(let name): tag(4, name)
    case .pictureUnknown(let name): tag(5, name)
    case .pictureUndecodable(let name, let reason): tag(6, name, reason)
    case .quoteIndexOutOfRange(let index, let count):
      tag(7)
      writer.int(index)
      writer.int(count)
    case .textInvalid(let reason): tag(8, reason)
    case .authorInvalid(let reason): tag(9, reason)
    case .presetUnknown(let name): tag(10, name)
    case .sizeInvalid(let reason): tag(11, reason)
    case .formatUnknown(let name): tag(12, name)
    case .transparencyUnsupported(let format): tag(13, format.rawValue)
    case .fontsUnavailable(let reason): tag(14, reason)
    case .renderFailed(let reason): tag(15, reason)
    case .decodingFailed(let reason): tag(16, reason)
    case .encodingFailed(let format, let reason): tag(17, format.rawValue, reason)
    case .pictureChanged(let name): tag(24, name)
    }
    return writer.bytes
  }

  static func decodeError(_ bytes: [UInt8]) throws(WireError) -> InnerPeaceError {
    var reader = WireReader(bytes)
    let error: InnerPeaceError
    switch try reader.u8() {
    case 0: error = .catalogUnreadable(file: try reader.string(), reason: try reader.string())
    case 1:
      let file = try reader.string()
      let reason = try reader.string()
      error = .catalogMalformed(file: file, line: try reader.int(), column: try reader.int(), reason: reason)
    case 2: error = .catalogInvalid(file: try reader.string(), reason: try reader.string())
    case 3: error = .pictureMissing(name: try reader.string())
    case 4: error = .pictureNameInvalid(name: try reader.string())
    case 5: error = .pictureUnknown(name: try reader.string())
    case 6: error = .pictureUndecodable(name: try reader.string(), reason: try reader.string())
    case 7: error = .quoteIndexOutOfRange(index: try reader.int(), count: try reader.int())
    case 8: error = .textInvalid(reason: try reader.string())
    case 9: error = .authorInvalid(reason: try reader.string())
    case 10: error = .presetUnknown(try reader.string())
    case 11: error = .sizeInvalid(reason: try reader.string())
    case 12: error = .formatUnknown(try reader.string())
    case 13:
      guard let format = ImageFormat(rawValue: try reader.string()) else { throw WireError("bad format") }
      error = .transparencyUnsupported(format: format)
    case 14: error = .fontsUnavailable(reason: try reader.string())
    case 15: error = .renderFailed(reason: try reader.string())
    case 16: error = .decodingFailed(reason: try reader.string())
    case 17:
      guard let format = ImageFormat(rawValue: try reader.string()) else { throw WireError("bad format") }
      error = .encodingFailed(format: format, reason: try reader.string())
    case 24: error = .pictureChanged(name: try reader.string())
    case let tag: throw WireError("unknown error tag \(tag)")
    }
    try reader.expectEnd()
    return error
  }
}

/// A frame that cannot be read: bad bytes, not a dead worker.
struct WireError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// Appends little-endian integers and length-prefixed UTF-8 strings.
struct WireWriter {
  var bytes: [UInt8] = []

  mutating func u8(_ value: UInt8) { bytes.append(value) }
  mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }
  mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
  mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
  mutating func int(_ value: Int) { u64(UInt64(bitPattern: Int64(value))) }
  mutating func string(_ value: String) {
    let utf8 = Array(value.utf8)
    u32(UInt32(utf8.count))
    bytes += utf8
  }
  mutating func optionalString(_ value: String?) {
    bool(value != nil)
    string(value ?? "")
  }
}

/// Reads what ``WireWriter`` wrote, checking every length against the bytes left.
struct WireReader {
  private let bytes: [UInt8]
  private var offset: Int

  init(_ bytes: [UInt8], from offset: Int = 0) {
    self.bytes = bytes
    self.offset = offset
  }

  private mutating func take(_ count: Int) throws(WireError) -> ArraySlice<UInt8> {
    guard count >= 0, count <= bytes.count - offset else { throw WireError("truncated frame header") }
    defer { offset += count }
    return bytes[offset..<offset + count]
  }

  mutating func u8() throws(WireError) -> UInt8 { try take(1).first! }

  mutating func bool() throws(WireError) -> Bool {
    switch try u8() {
    case 0: return false
    case 1: return true
    case let value: throw WireError("bad boolean \(value)")
    }
  }

  mutating func u32() throws(WireError) -> UInt32 {
    try take(4).reversed().reduce(0) { $0 << 8 | UInt32($1) }
  }

  mutating func u64() throws(WireError) -> UInt64 {
    try take(8).reversed().reduce(0) { $0 << 8 | UInt64($1) }
  }

  mutating func int() throws(WireError) -> Int { Int(Int64(bitPattern: try u64())) }

  mutating func string() throws(WireError) -> String {
    let count = Int(try u32())
    guard let text = String(validating: try take(count), as: UTF8.self) else { throw WireError("bad UTF-8") }
    return text
  }

  mutating func optionalString() throws(WireError) -> String? {
    let present = try bool()
    let text = try string()
    return present ? text : nil
  }

  func expectEnd() throws(WireError) {
    guard offset == bytes.count else { throw WireError("\(bytes.count - offset) stray bytes after a frame header") }
  }
}
