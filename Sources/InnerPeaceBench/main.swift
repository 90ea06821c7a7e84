// innerpeace-bench: per-stage render timings, and an adapter for ../shared/bench/peers/run.sh.
//
//   innerpeace-bench stages [--runs N]          per-stage medians for og and classic, then the PNG
//                                              encoder alone, new and old, per preset (markdown)
//   innerpeace-bench peer BG QUOTE AUTHOR W H OUT   one card, the peer benchmark's job
//   innerpeace-bench colour [--runs N]          decode cost of colour profiles (markdown)
//   innerpeace-bench lines [--preset P ...] [--catalog DIR]
//                                              each quote's fitted size, wrap width and lines (JSON)
//   innerpeace-bench worst [--runs N] [--only NAME] [--canvas WxH ...] [--straight false]
//                                              CPU seconds of the costliest texts at the extreme
//                                              canvases (markdown)
//   innerpeace-bench report [--runs N]         a warm og card with and without its typeset report
//   innerpeace-bench formats [--runs N]        each format's encode time, size and distance from
//                                              the PNG, for og and story (markdown)
//   innerpeace-bench formats --cards N         AVIF against WebP, size and distance, over N cards
//
// Build it in release mode for meaningful numbers: swift build -c release --product innerpeace-bench
internal import CInnerPeace
import Foundation
import InnerPeace

func median(_ values: [Double]) -> Double {
  let sorted = values.sorted()
  guard !sorted.isEmpty else { return 0 }
  return sorted.count % 2 == 1
    ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func milliseconds(_ seconds: Double) -> String { String(format: "%.2f", seconds * 1000) }

func fail(_ message: String) -> Never {
  FileHandle.standardError.write(Data("innerpeace-bench: \(message)\n".utf8))
  exit(2)
}

/// The size libpng's defaults (Cairo's write_to_png: zlib 6, adaptive filters) give the same pixels.
func libpngDefaultSize(of png: [UInt8]) -> Int {
  guard let surface = cairoSurface(fromPNG: png) else { return 0 }
  defer { cairo_surface_destroy(surface) }
  var written = 0
  _ = withUnsafeMutablePointer(to: &written) { counter in
    cairo_surface_write_to_png_stream(
      surface,
      { closure, _, length in
        closure!.assumingMemoryBound(to: Int.self).pointee += Int(length)
        return CAIRO_STATUS_SUCCESS
      }, counter)
  }
  return written
}

func stages(runs: Int) throws {
  let catalog = try Catalog.bundled()
  // A cold renderer keeps no backgrounds, so every run decodes and scales; a warm one caches them.
  let cold = try CardRenderer(catalog: catalog, backgroundCacheBytes: 0)
  let warm = try CardRenderer(catalog: catalog)
  let quoteIndex = catalog.quotes.indices.max(by: { catalog.quotes[$0].text.count < catalog.quotes[$1].text.count })!
  let medium = catalog.quotes.indices.min(by: {
    abs(catalog.quotes[$0].text.count - 160) < abs(catalog.quotes[$1].text.count - 160)
  })!
  print(
    "Per-stage medians over \(runs) runs (ms), one thread. Quote \(medium) (\(catalog.quotes[medium].text.count) chars),"
  )
  print(
    "picture \(catalog.pictures[0]). Longest bundled quote: \(quoteIndex) (\(catalog.quotes[quoteIndex].text.count) chars)."
  )
  print("")
  print(
    "| preset | decode | scale | fit | blur | draw | encode PNG | cold total | warm PNG | warm JPEG | warm WebP | layouts | PNG KB | libpng default KB | ratio |"
  )
  print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  for preset in [Preset.og, .classic] {
    var request = CardRequest(preset: preset, quote: .index(medium), picture: .named(catalog.pictures[0]), seed: 1)
    var timings: [StageTimings] = []
    var card = try cold.render(request)
    for _ in 0..<runs {
      card = try cold.render(request)
      timings.append(card.timings)
    }
    func warmMedian(_ format: ImageFormat) throws -> Double {
      request.format = format
      _ = try warm.render(request)
      let clock = ContinuousClock()
      var totals: [Double] = []
      for _ in 0..<runs {
        let start = clock.now
        _ = try warm.render(request)
        totals.append((clock.now - start) / .seconds(1))
      }
      return median(totals)
    }
    let png = try warmMedian(.png)
    let jpeg = try warmMedian(.jpeg)
    let webp = try warmMedian(.webp)
    let reference = libpngDefaultSize(of: card.bytes)
    let columns = [
      median(timings.map(\.decode)), median(timings.map(\.scale)), median(timings.map(\.fit)),
      median(timings.map(\.blur)), median(timings.map(\.draw)), median(timings.map(\.encode)),
      median(timings.map(\.total)), png, jpeg, webp,
    ].map(milliseconds)
    print(
      "| \(preset) | \(columns.joined(separator: " | ")) | \(card.layoutPasses) | \(card.bytes.count / 1024) | \(reference / 1024) | "
        + String(format: "%.3f", Double(card.bytes.count) / Double(reference)) + " |")
  }
  try pngEncoderTable(runs: runs, catalog: catalog, renderer: warm, quote: medium)
}

/// The peer benchmark's job: BG QUOTE AUTHOR W H OUT.png, one card with that photo and text.
func peer(_ arguments: [String]) throws {
  guard arguments.count == 6, let width = Int(arguments[3]), let height = Int(arguments[4]) else {
    fail("usage: innerpeace-bench peer BG QUOTE AUTHOR W H OUT.png")
  }
  let background = URL(fileURLWithPath: arguments[0])
  let catalog = try Catalog(
    quotes: [Quote(text: arguments[1], author: arguments[2])], pictures: [background.lastPathComponent],
    directory: background.deletingLastPathComponent())
  let preset: Preset =
    width == 2048 && height == 1536 ? .classic : .custom(try CanvasSize(width: width, height: height))
  // One card and exit, as `innerpeace render` does it.
  let card = try CardRenderer.renderOne(
    CardRequest(preset: preset, quote: .index(0), picture: .random, seed: 0), catalog: catalog)
  guard FileManager.default.createFile(atPath: arguments[5], contents: Data(card.bytes)) else {
    fail("cannot write \(arguments[5])")
  }
  if ProcessInfo.processInfo.environment["PEER_VERBOSE"] != nil {
    FileHandle.standardError.write(Data("font_px=\(card.fontSize)\n".utf8))
  }
}

/// One fitted quote, as `lines` prints it.
struct FittedLines: Encodable {
  let preset: String
  let quote: Int
  /// Whether the text holds its own line breaks (verse); comparisons of line breaking use prose.
  let verse: Bool
  let truncated: Bool
  let size: Int
  /// How many times the fitter laid the text out to choose the size and lines.
  let passes: Int
  /// The quote's wrap width at that size, in pixels (a balanced paragraph is wrapped narrower
  /// than the bounds allow).
  let wrapWidth: Double
  /// The draw bounds' width, in pixels: the widest any line may be, overhang included.
  let boundsWidth: Int
  let lines: [String]
  /// The author line as set, "— " and all: more than one line means it wrapped.
  let authorLines: [String]
  let text: String
}

/// For every catalog quote at every preset asked for (default og, square, story, classic): the
/// fitted size, the quote's wrap width and its lines as innerpeace sets them, as a JSON array.
func lines(_ arguments: [String]) throws {
  var presets: [Preset] = []
  var catalogDirectory: String? = nil
  var index = 0
  while index < arguments.count {
    let argument = arguments[index]
    guard index + 1 < arguments.count else { fail("\(argument) needs a value") }
    switch argument {
    case "--preset": presets.append(try Preset(parsing: arguments[index + 1]))
    case "--catalog": catalogDirectory = arguments[index + 1]
    default: fail("unknown option \(argument); usage: innerpeace-bench lines [--preset P ...] [--catalog DIR]")
    }
    index += 2
  }
  if presets.isEmpty { presets = [.og, .square, .story, .classic] }
  let catalog =
    try catalogDirectory.map { try Catalog(directory: URL(fileURLWithPath: $0, isDirectory: true)) }
    ?? Catalog.bundled()
  let renderer = try CardRenderer(catalog: catalog, backgroundCacheBytes: 0)
  var results: [FittedLines] = []
  for preset in presets {
    for (number, quote) in catalog.quotes.enumerated() {
      let fit = try renderer.fitText(quote.text, author: quote.author, preset: preset)
      results.append(
        FittedLines(
          preset: preset.description, quote: number, verse: quote.text.contains("\n"), truncated: fit.truncated,
          size: fit.fontSize, passes: fit.passes, wrapWidth: (fit.wrapWidth * 1000).rounded(.down) / 1000,
          boundsWidth: preset.geometry.drawBounds.width, lines: fit.lines,
          authorLines: fit.authorLines.map { $0.filter { $0 != "\u{200E}" && $0 != "\u{200F}" } }, text: quote.text))
    }
  }
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
  FileHandle.standardOutput.write(try encoder.encode(results))
  FileHandle.standardOutput.write(Data("\n".utf8))
}

/// The texts that cost the text path most, each within the limits a request is checked against
/// (``Limits``): one long word, thousands of one-letter words, thousands of spaces, a break
/// opportunity after every character, verse of thousands of lines, a bidi mix at the bidi limits,
/// combining marks at their limit. The bidi mix holds 100 isolated words (200 controls).
func worstTexts() -> [(name: String, text: String)] {
  let limit = Limits.maximumTextCharacters
  let bidiWords = ["\u{5E9}\u{5DC}\u{5D5}\u{5DD}", "peace", "\u{627}\u{644}\u{633}\u{644}\u{627}\u{645}", "2026"]
  var bidi = ""
  var controls = 0
  var word = 0
  while bidi.count + 12 < limit {
    if controls + 2 <= 200 && word % 8 == 0 {
      bidi += "\u{2067}" + bidiWords[word % 4] + "\u{2069} "
      controls += 2
    } else {
      bidi += bidiWords[word % 4] + " "
    }
    word += 1
  }
  let marked = "a" + String(repeating: "\u{301}", count: Limits.maximumCombiningMarksPerCharacter)
  let markedCount = min(limit / 2, Limits.maximumTextBytes / (marked.utf8.count + 1))
  return [
    ("long word of dots", String(repeating: ".", count: limit - 1)),
    ("long word of letters", String(repeating: "W", count: limit)),
    ("long Arabic word", String(repeating: "\u{628}", count: limit)),
    ("emoji", String(repeating: "\u{1F600}", count: Limits.maximumTextBytes / 4)),
    ("one-letter words", String(repeating: "a ", count: limit / 2 - 1) + "a"),
    ("spaces", "a" + String(repeating: " ", count: limit - 2) + "b"),
    ("break after every character", String(repeating: "\u{6C38}", count: limit)),
    ("URL separators", String(repeating: "a/", count: limit / 2 - 1) + "a"),
    ("verse of one-letter lines", String(repeating: "a\n", count: limit / 2 - 1) + "a"),
    ("bidi mix", bidi),
    ("combining marks at the limit", Array(repeating: marked, count: markedCount).joined(separator: " ")),
  ]
}

let worstUsage = "innerpeace-bench worst [--runs N] [--only NAME] [--canvas WxH ...] [--straight false]"

/// The CPU time this process has used, in seconds.
func processCPUSeconds() -> Double {
  var time = timespec()
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
  return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Renders every worst text on the largest and the most extreme canvases (or those given), as
/// JPEG over a photo, drawn as written (what `/card.jpg?w=&h=&straightQuotes=true&text=` does:
/// typographic punctuation would turn the dots into fewer ellipses; `--straight false` applies
/// it), and prints the CPU seconds of each render (the least of
/// `runs`), its fit stage and its layout passes, costliest first.
func worst(_ arguments: [String]) throws {
  var runs = 1
  var only: String? = nil
  var canvases: [(Int, Int)] = []
  var straight = true
  var index = 0
  while index < arguments.count {
    let argument = arguments[index]
    guard index + 1 < arguments.count else { fail("\(argument) needs a value") }
    switch argument {
    case "--runs": runs = max(1, Int(arguments[index + 1]) ?? 1)
    case "--only": only = arguments[index + 1]
    case "--canvas":
      let size = try CanvasSize(parsing: arguments[index + 1])
      canvases.append((size.width, size.height))
    case "--straight": straight = arguments[index + 1] != "false"
    default: fail("unknown option \(argument); usage: \(worstUsage)")
    }
    index += 2
  }
  if canvases.isEmpty { canvases = [(4096, 4096), (4096, 200), (200, 4096), (200, 200), (4096, 1000)] }
  let catalog = try Catalog.bundled()
  let renderer = try CardRenderer(catalog: catalog, backgroundCacheBytes: 0)
  var rows: [(cpu: Double, line: String)] = []
  for (name, text) in worstTexts() where only.map({ name.contains($0) }) ?? true {
    for (width, height) in canvases {
      let request = CardRequest(
        preset: .custom(try CanvasSize(width: width, height: height)), quote: .text(text, author: "Worst Case"),
        picture: .named(catalog.pictures[0]), seed: 1, format: .jpeg, typographicPunctuation: !straight)
      var best = Double.infinity
      var card: RenderedCard? = nil
      for _ in 0..<runs {
        let start = processCPUSeconds()
        card = try renderer.render(request)
        best = min(best, processCPUSeconds() - start)
      }
      let rendered = card!
      rows.append(
        (
          best,
          "| \(name) | \(width)x\(height) | \(String(format: "%.3f", best)) | "
            + "\(String(format: "%.3f", rendered.timings.fit)) | \(rendered.fontSize) | \(rendered.layoutPasses) |"
        ))
      FileHandle.standardError.write(Data("\(name) \(width)x\(height): \(String(format: "%.3f", best)) s\n".utf8))
    }
  }
  print("CPU seconds per render (least of \(runs)), JPEG over \(catalog.pictures[0]), costliest first.")
  print("")
  print("| text | canvas | CPU s | fit s (wall) | size px | layouts |")
  print("|---|---|---:|---:|---:|---:|")
  for row in rows.sorted(by: { $0.cpu > $1.cpu }) { print(row.line) }
}

let arguments = Array(CommandLine.arguments.dropFirst())

/// The value of `--runs N` (at least 1), or `fallback` when it is not given.
func runsOption(default fallback: Int) -> Int {
  guard let index = arguments.firstIndex(of: "--runs"), index + 1 < arguments.count,
    let value = Int(arguments[index + 1])
  else { return fallback }
  return max(1, value)
}

do {
  switch arguments.first {
  case "stages":
    try stages(runs: runsOption(default: 15))
  case "colour":
    try colour(runs: runsOption(default: 15))
  case "peer":
    try peer(Array(arguments.dropFirst()))
  case "lines":
    try lines(Array(arguments.dropFirst()))
  case "worst":
    try worst(Array(arguments.dropFirst()))
  case "report":
    try reportBench(runs: runsOption(default: 30))
  case "formats":
    if let index = arguments.firstIndex(of: "--cards"), index + 1 < arguments.count,
      let count = Int(arguments[index + 1])
    {
      try formatsOverCards(max(1, count))
    } else {
      try formats(runs: runsOption(default: 15))
    }
  default:
    fail(
      "usage: innerpeace-bench stages [--runs N] | colour [--runs N] | peer BG QUOTE AUTHOR W H OUT.png"
        + " | lines [--preset P ...] [--catalog DIR] | worst [--runs N] [--only NAME] [--canvas WxH ...]"
        + " | report [--runs N] | formats [--runs N] | formats --cards N")
  }
} catch {
  fail("\(error)")
}
