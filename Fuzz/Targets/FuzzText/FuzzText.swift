import FuzzSupport
import InnerPeace

/// The text path: text, author, canvas and options through the text rules and fitting (every
/// layout the size search and the line breaker make), and for some inputs a full render to
/// pixels. Any trap or abort (in Swift, Cairo, Pango or FriBidi) is a crash.
///
/// Input: byte 0 holds the options: bits 0-2 the preset (0 og, 1 square, 2 story, 3 classic,
/// 4-7 a custom size), bit 3 centred, bit 4 no author line, bit 5 over a photo (else
/// transparent, which skips decoding the photo), bits 6 and 7 both set: a full render (halo,
/// drawing, PNG encoding), else fitting only, which is what reaches Pango and FriBidi with the
/// text and runs many times faster; bit 6 alone: fitting a repeated quote (below). A custom size
/// takes bytes 1-4: width and height, big-endian, each mapped into 200...2048. With bit 6 alone
/// the next byte is a repeat count (2 to 257). The rest is UTF-8 (invalid bytes become U+FFFD):
/// the quote, then after the last NUL byte, if any, the author; the quote is repeated as the
/// count says, up to the text limit's bytes, so a 60-byte input reaches a thousand bidi controls
/// (FriBidi 1.0.8's use after free, issue 17), marks or spaces.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzText(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  guard let data, size > 0 else { return 0 }
  let bytes = UnsafeBufferPointer(start: data, count: size)
  let options = bytes[0]
  var rest = bytes[1...]
  let preset: Preset
  switch options & 0b111 {
  case 0: preset = .og
  case 1: preset = .square
  case 2: preset = .story
  case 3: preset = .classic
  default:
    guard rest.count >= 4 else { return 0 }
    let side = { (high: UInt8, low: UInt8) in 200 + (Int(high) << 8 | Int(low)) % 1849 }
    let start = rest.startIndex
    guard
      let canvas = try? CanvasSize(
        width: side(rest[start], rest[start + 1]), height: side(rest[start + 2], rest[start + 3]))
    else { return 0 }
    preset = .custom(canvas)
    rest = rest.dropFirst(4)
  }
  // Bit 6 alone: the text is repeated, the count (2 to 257) in the next byte, so that a short
  // input reaches the long runs of one pattern (a thousand bidi controls, marks or spaces) that
  // mutations would take long to grow; at most the text limit's bytes.
  var repeats = 1
  if options & 0b1100_0000 == 0b0100_0000 {
    guard let count = rest.first else { return 0 }
    repeats = Int(count) + 2
    rest = rest.dropFirst()
  }
  var text = String(decoding: rest, as: UTF8.self)
  var author = ""
  if let split = rest.lastIndex(of: 0) {
    text = String(decoding: rest[..<split], as: UTF8.self)
    author = String(decoding: rest[(split + 1)...], as: UTF8.self)
  }
  if repeats > 1 {
    guard text.utf8.count * repeats <= Limits.maximumTextBytes else { return 0 }
    text = String(repeating: text, count: repeats)
  }
  let showsAuthor = options & 0b1_0000 == 0
  let alignment: TextAlignment = options & 0b1000 != 0 ? .center : .natural
  // Refusals (empty text, over the limits, control characters, bidi controls) are answers, not
  // crashes.
  guard options & 0b1100_0000 == 0b1100_0000 else {
    _ = try? FuzzTextRenderer.shared.fitText(
      String(text), author: showsAuthor ? author : "", preset: preset, alignment: alignment)
    return 0
  }
  let request = CardRequest(
    preset: preset, quote: .text(String(text), author: author), seed: 1, format: .png, showsAuthor: showsAuthor,
    alignment: alignment, transparent: options & 0b10_0000 == 0)
  _ = try? FuzzTextRenderer.shared.render(request)
  return 0
}

enum FuzzTextRenderer {
  /// One renderer, made on first use; a small background cache, since inputs vary the size.
  static let shared: CardRenderer = {
    do {
      return try CardRenderer(catalog: try Catalog.bundled(), backgroundCacheBytes: 32 << 20)
    } catch {
      fatalError("the fuzz target needs the bundled catalog and fonts: \(error)")
    }
  }()
}

@main
enum FuzzText {
  static func main() { FuzzDriver.main(fuzzText) }
}
