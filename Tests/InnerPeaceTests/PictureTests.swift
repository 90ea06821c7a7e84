import Foundation
import InnerPeace
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Photos are checked once at catalog load, fully and fairly: what cannot be drawn is refused
/// there with an error naming it; what can be drawn (CMYK, grey, any PNG flavour, a phone's
/// rotated photo) comes out right.
@Suite("Pictures")
struct PictureTests {
  static let quotes = #"[{"text": "Calm", "author": ""}]"#

  /// A catalog folder holding `files`, with `pictures` listed in pictures.json.
  static func withCatalog<T>(
    files: [String: [UInt8]], pictures: [String]? = nil, _ body: (URL) throws -> T
  ) throws -> T {
    try withTemporaryFolder("innerpeace-pictures") { folder in
      try folder.writeText(quotes, to: "quotes.json")
      let names = pictures ?? files.keys.sorted()
      let json = try JSONSerialization.data(withJSONObject: names)
      try Data(json).write(to: folder.appendingPathComponent("pictures.json"))
      for (name, bytes) in files { try folder.writeBytes(bytes, to: name) }
      return try body(folder)
    }
  }

  /// The card for the catalog's only picture, decoded.
  static func render(_ folder: URL, preset: Preset = .og) throws -> DecodedImage {
    let renderer = try CardRenderer(catalog: try Catalog(directory: folder), backgroundCacheBytes: 0)
    return try PNGCodec.decode(try renderer.render(CardRequest(preset: preset, quote: .index(0), seed: 1)).bytes)
  }

  static func expectUndecodable(
    _ error: InnerPeaceError?, named name: String, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    guard case .pictureUndecodable(let reported, let reason)? = error else {
      Issue.record(
        "expected pictureUndecodable for \(name), got \(String(describing: error))",
        sourceLocation: sourceLocation)
      return
    }
    #expect(reported == name, sourceLocation: sourceLocation)
    #expect(!reason.isEmpty, sourceLocation: sourceLocation)
    #expect(!(error?.description.contains("\n") ?? true), sourceLocation: sourceLocation)
  }

  // MARK: Refused at load

  /// Photos that cannot be drawn, each made from a good one. Before, each passed the start-up
  /// check and then rendered a grey card or failed every request that used it.
  static let undrawable: [(String, @Sendable () throws -> [UInt8])] = [
    ("cut-700.jpg", { Array(try bundledPhotoBytes().prefix(700)) }),
    (
      "cut-30-percent.jpg",
      {
        let b = try bundledPhotoBytes(); return Array(b.prefix(b.count * 3 / 10))
      }
    ),
    ("claims-60000.jpg", { try PictureFixtures.claimingSize(bundledPhotoBytes(), width: 60_000, height: 60_000) }),
    (
      "strip-1x60000.jpg",
      { try PictureFixtures.jpeg(width: 1, height: 60_000, channels: 1, pixels: [UInt8](repeating: 90, count: 60_000)) }
    ),
    (
      "cut-30-percent.png",
      {
        let png = try PictureFixtures.png(width: 300, height: 200, colourType: 2, bitDepth: 8) { x, y in
          [(x * 7 + y * 13) % 256, (x * y) % 256, (x ^ y) % 256]
        }
        return Array(png.prefix(png.count * 3 / 10))
      }
    ),
    (
      "bad-crc.png",
      {
        var png = try PictureFixtures.png(width: 300, height: 200, colourType: 2, bitDepth: 8) { x, y in
          [(x * 7 + y * 13) % 256, (x * y) % 256, (x ^ y) % 256]
        }
        let idat = PictureFixtures.pngChunks(png).first { $0.type == "IDAT" }!
        png[idat.offset + 8 + idat.length / 2] ^= 0x55
        return png
      }
    ),
    (
      "claims-20000.png",
      {
        PictureFixtures.claimingSize(
          png: try PictureFixtures.flatGreyPNG(width: 64, height: 64, grey: 100),
          width: 20_000, height: 20_000)
      }
    ),
    ("tall-1x40000.png", { try PictureFixtures.flatGreyPNG(width: 1, height: 40_000, grey: 100) }),
  ]

  @Test(arguments: undrawable.map(\.0))
  func undrawablePhotoIsRefusedAtLoad(name: String) throws {
    let bytes = try Self.undrawable.first { $0.0 == name }!.1()
    try Self.withCatalog(files: ["photo.jpg": try bundledPhotoBytes(), name: bytes]) { folder in
      Self.expectUndecodable(innerPeaceError { try Catalog(directory: folder) }, named: name)
    }
  }

  /// A JPEG cut short and given an end-of-image marker passes every structural check; it is
  /// found out when decoded, and is an error naming it, not a card with a grey bottom.
  @Test func jpegWithAScanCutShortFailsAtRender() throws {
    let good = try PictureFixtures.noiseJPEG(width: 256, height: 256)
    let cut = Array(good.prefix(good.count * 3 / 10)) + [0xFF, 0xD9]
    try Self.withCatalog(files: ["cut.jpg": cut]) { folder in
      let renderer = try CardRenderer(catalog: try Catalog(directory: folder), backgroundCacheBytes: 0)
      Self.expectUndecodable(
        innerPeaceError { try renderer.render(CardRequest(preset: .og, quote: .index(0), seed: 1)) }, named: "cut.jpg")
    }
  }

  /// A photo bigger on disk than any photo needs to be is refused from its size alone (the file
  /// is sparse: nothing is written or read).
  @Test func hugeFileIsRefusedWithoutReadingIt() throws {
    try Self.withCatalog(files: ["photo.jpg": try bundledPhotoBytes(), "huge.jpg": try bundledPhotoBytes()]) { folder in
      #expect(truncate(folder.appendingPathComponent("huge.jpg").path, 1 << 30) == 0)
      Self.expectUndecodable(innerPeaceError { try Catalog(directory: folder) }, named: "huge.jpg")
    }
  }

  // MARK: Not regular files

  /// Runs `body` on its own thread; if it is still blocked after a few seconds (opening a FIFO
  /// for reading waits for a writer), records an issue and opens the FIFO for writing to free it.
  static func withoutHanging<T: Sendable>(
    fifo: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: @escaping @Sendable () -> T
  ) -> T {
    let result = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      let value = body()
      result.lock.withLock { result.value = value }
      done.signal()
    }
    if done.wait(timeout: .now() + 5) == .timedOut {
      Issue.record("blocked on the FIFO for 5 s", sourceLocation: sourceLocation)
      while done.wait(timeout: .now() + 0.05) == .timedOut {
        let writer = open(fifo, O_WRONLY | O_NONBLOCK)
        if writer >= 0 { close(writer) }
      }
    }
    return result.lock.withLock { result.value! }
  }

  @Test func fifoIsRefusedAtLoadWithoutHanging() throws {
    try Self.withCatalog(files: ["photo.jpg": try bundledPhotoBytes()], pictures: ["photo.jpg", "x.jpg"]) { folder in
      let fifo = folder.appendingPathComponent("x.jpg").path
      #expect(mkfifo(fifo, 0o600) == 0)
      let error = Self.withoutHanging(fifo: fifo) { () -> InnerPeaceError? in
        do {
          _ = try Catalog(directory: folder)
          return nil
        } catch let error as InnerPeaceError {
          return error
        } catch { return nil }
      }
      Self.expectUndecodable(error, named: "x.jpg")
    }
  }

  /// The file is opened again at render time, and may have been swapped since the load.
  @Test func photoSwappedForAFIFOAfterLoadFailsAtRender() throws {
    try Self.withCatalog(files: ["photo.jpg": try bundledPhotoBytes()]) { folder in
      let renderer = try CardRenderer(catalog: try Catalog(directory: folder), backgroundCacheBytes: 0)
      let path = folder.appendingPathComponent("photo.jpg").path
      #expect(unlink(path) == 0)
      #expect(mkfifo(path, 0o600) == 0)
      let error = Self.withoutHanging(fifo: path) { () -> InnerPeaceError? in
        do {
          _ = try renderer.render(CardRequest(preset: .og, quote: .index(0), seed: 1))
          return nil
        } catch let error as InnerPeaceError {
          return error
        } catch { return nil }
      }
      Self.expectUndecodable(error, named: "photo.jpg")
    }
  }

  @Test func deviceIsRefusedAtLoad() throws {
    try Self.withCatalog(files: ["photo.jpg": try bundledPhotoBytes()], pictures: ["photo.jpg", "zero.jpg"]) {
      folder in
      #expect(symlink("/dev/zero", folder.appendingPathComponent("zero.jpg").path) == 0)
      Self.expectUndecodable(innerPeaceError { try Catalog(directory: folder) }, named: "zero.jpg")
    }
  }

  // MARK: Colour spaces

  /// Adobe software writes CMYK JPEGs with inverted values (255 = no ink) and an APP14 marker;
  /// libjpeg cannot make RGB of them, so innerpeace converts them itself.
  @Test func cmykJPEGIsConvertedNotRefused() throws {
    // Pure red (no cyan, full magenta and yellow, no black), stored inverted as Adobe does.
    let red = try PictureFixtures.jpeg(
      width: 64, height: 64, channels: 4, pixels: [UInt8]([255, 0, 0, 255]).repeated(64 * 64))
    try Self.withCatalog(files: ["red.jpg": red]) { folder in
      let card = try Self.render(folder)
      for (x, y) in [(0, 0), (card.width - 1, card.height - 1)] {
        let p = card.pixel(x, y)
        #expect(p.r > 245 && p.g < 10 && p.b < 10, "corner (\(x), \(y)) is \(p), expected red")
      }
    }
  }

  @Test func greyJPEGRendersGrey() throws {
    let grey = try PictureFixtures.jpeg(
      width: 64, height: 64, channels: 1, pixels: [UInt8](repeating: 100, count: 64 * 64))
    try Self.withCatalog(files: ["grey.jpg": grey]) { folder in
      let p = try Self.render(folder).pixel(0, 0)
      #expect(abs(p.r - 100) <= 2 && abs(p.g - 100) <= 2 && abs(p.b - 100) <= 2, "\(p)")
    }
  }

  // MARK: EXIF orientation

  /// Where the black square of a 400 x 100 picture (at x 150..<170, y 5..<25 as seen) lands for
  /// each orientation tag: the picture as stored, worked out by hand from the Exif definitions.
  static let storedMarkers: [Int: (width: Int, height: Int, xs: Range<Int>, ys: Range<Int>)] = [
    1: (400, 100, 150..<170, 5..<25),
    2: (400, 100, 230..<250, 5..<25),
    3: (400, 100, 230..<250, 75..<95),
    4: (400, 100, 150..<170, 75..<95),
    5: (100, 400, 5..<25, 150..<170),
    6: (100, 400, 5..<25, 230..<250),
    7: (100, 400, 75..<95, 230..<250),
    8: (100, 400, 75..<95, 150..<170),
  ]

  /// The square as seen on an og card: 400 x 100 covers 1200 x 630 at 6.3x, 660 px cropped left.
  static func expectMarkerUpright(_ image: DecodedImage, sourceLocation: SourceLocation = #_sourceLocation) {
    var minX = Int.max, minY = Int.max, maxX = Int.min, maxY = Int.min
    for y in 0..<200 {
      for x in 0..<image.width where image.luma(x, y) < 128 {
        minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
      }
    }
    let scale = 6.3
    let found = "found the square at x \(minX)...\(maxX), y \(minY)...\(maxY)"
    #expect(abs(Double(minX) - (150 * scale - 660)) <= 3, "\(found)", sourceLocation: sourceLocation)
    #expect(abs(Double(maxX + 1) - (170 * scale - 660)) <= 3, "\(found)", sourceLocation: sourceLocation)
    #expect(abs(Double(minY) - 5 * scale) <= 3, "\(found)", sourceLocation: sourceLocation)
    #expect(abs(Double(maxY + 1) - 25 * scale) <= 3, "\(found)", sourceLocation: sourceLocation)
  }

  @Test(arguments: 1...8, [false, true])
  func exifOrientationIsApplied(orientation: Int, bigEndian: Bool) throws {
    let stored = Self.storedMarkers[orientation]!
    let jpeg = PictureFixtures.withExif(
      try PictureFixtures.markedJPEG(width: stored.width, height: stored.height, black: [(stored.xs, stored.ys)]),
      tiff: PictureFixtures.tiffWithOrientation(UInt16(orientation), bigEndian: bigEndian))
    try Self.withCatalog(files: ["phone.jpg": jpeg]) { folder in
      Self.expectMarkerUpright(try Self.render(folder))
    }
  }

  @Test func pngExifOrientationIsApplied() throws {
    let stored = Self.storedMarkers[6]!
    let png = try PictureFixtures.png(
      width: stored.width, height: stored.height, colourType: 0, bitDepth: 8,
      extraChunks: [("eXIf", PictureFixtures.tiffWithOrientation(6, bigEndian: true))]
    ) { x, y in [stored.xs.contains(x) && stored.ys.contains(y) ? 0 : 255] }
    try Self.withCatalog(files: ["phone.png": png]) { folder in
      Self.expectMarkerUpright(try Self.render(folder))
    }
  }

  /// Exif bytes are hostile input: offsets past the end, absurd counts, unknown values. Each
  /// is ignored (the photo is shown as stored), never a crash or a refusal.
  @Test func hostileExifIsIgnored() throws {
    let orientation6 = PictureFixtures.tiffWithOrientation(6, bigEndian: false)
    var hugeCount = orientation6
    hugeCount[8] = 0xFF
    hugeCount[9] = 0xFF
    var farIFD = orientation6
    farIFD.replaceSubrange(4..<8, with: [0xF0, 0xFF, 0xFF, 0xFF])
    var wrongType = orientation6
    wrongType[22 + 2] = 7
    var badOrder = orientation6
    badOrder[0] = 0x58
    badOrder[1] = 0x58
    let payloads: [[UInt8]] = [
      [], Array(orientation6.prefix(6)), Array(orientation6.prefix(24)), hugeCount, farIFD, wrongType, badOrder,
      PictureFixtures.tiffWithOrientation(0, bigEndian: false), PictureFixtures.tiffWithOrientation(9, bigEndian: true),
      PictureFixtures.tiffWithOrientation(0xFFFF, bigEndian: true),
    ]
    let stored = Self.storedMarkers[1]!
    let plain = try PictureFixtures.markedJPEG(
      width: stored.width, height: stored.height, black: [(stored.xs, stored.ys)])
    for (index, payload) in payloads.enumerated() {
      try Self.withCatalog(files: ["exif-\(index).jpg": PictureFixtures.withExif(plain, tiff: payload)]) { folder in
        Self.expectMarkerUpright(try Self.render(folder))
      }
    }
  }

  // MARK: PNG flavours

  /// Every PNG colour type and bit depth of the same picture gives the same card, byte for byte;
  /// interlaced or not.
  @Test func pngFlavoursGiveTheSameCard() throws {
    let colours = [(200, 40, 40), (40, 160, 90), (30, 60, 220), (250, 250, 240)]
    let index: (Int, Int) -> Int = { x, y in (x / 9 + y / 7) % 4 }
    let rgb8 = try PictureFixtures.png(width: 61, height: 47, colourType: 2, bitDepth: 8) { x, y in
      let c = colours[index(x, y)]
      return [c.0, c.1, c.2]
    }
    let palette = colours.flatMap { [UInt8($0.0), UInt8($0.1), UInt8($0.2)] }
    let flavours: [(String, [UInt8])] = [
      (
        "rgb8-interlaced",
        try PictureFixtures.png(width: 61, height: 47, colourType: 2, bitDepth: 8, interlaced: true) {
          x, y in
          let c = colours[index(x, y)]; return [c.0, c.1, c.2]
        }
      ),
      (
        "rgb16",
        try PictureFixtures.png(width: 61, height: 47, colourType: 2, bitDepth: 16) {
          x, y in
          let c = colours[index(x, y)]; return [c.0 * 257, c.1 * 257, c.2 * 257]
        }
      ),
      (
        "rgba8",
        try PictureFixtures.png(width: 61, height: 47, colourType: 6, bitDepth: 8) {
          x, y in
          let c = colours[index(x, y)]; return [c.0, c.1, c.2, 255]
        }
      ),
      (
        "rgba16-interlaced",
        try PictureFixtures.png(width: 61, height: 47, colourType: 6, bitDepth: 16, interlaced: true) {
          x, y in
          let c = colours[index(x, y)]; return [c.0 * 257, c.1 * 257, c.2 * 257, 65535]
        }
      ),
      (
        "palette2",
        try PictureFixtures.png(width: 61, height: 47, colourType: 3, bitDepth: 2, palette: palette) {
          x, y in [index(x, y)]
        }
      ),
      (
        "palette8-interlaced",
        try PictureFixtures.png(
          width: 61, height: 47, colourType: 3, bitDepth: 8,
          interlaced: true, palette: palette, transparency: [255, 255, 255, 255]
        ) { x, y in [index(x, y)] }
      ),
    ]
    let reference = try Self.withCatalog(files: ["p.png": rgb8]) { try Self.render($0) }
    for (name, bytes) in flavours {
      let card = try Self.withCatalog(files: ["p.png": bytes]) { try Self.render($0) }
      #expect(card.rgba == reference.rgba, "\(name) differs from 8-bit RGB")
    }

    let greys = [0, 85, 170, 255]
    let grey8 = try PictureFixtures.png(width: 61, height: 47, colourType: 2, bitDepth: 8) { x, y in
      Array(repeating: greys[index(x, y)], count: 3)
    }
    let greyFlavours: [(String, [UInt8])] = [
      ("grey2", try PictureFixtures.png(width: 61, height: 47, colourType: 0, bitDepth: 2) { x, y in [index(x, y)] }),
      (
        "grey8-interlaced",
        try PictureFixtures.png(width: 61, height: 47, colourType: 0, bitDepth: 8, interlaced: true) {
          x, y in [greys[index(x, y)]]
        }
      ),
      (
        "grey16",
        try PictureFixtures.png(width: 61, height: 47, colourType: 0, bitDepth: 16) {
          x, y in [greys[index(x, y)] * 257]
        }
      ),
      (
        "grey-alpha8",
        try PictureFixtures.png(width: 61, height: 47, colourType: 4, bitDepth: 8) {
          x, y in [greys[index(x, y)], 255]
        }
      ),
    ]
    let greyReference = try Self.withCatalog(files: ["p.png": grey8]) { try Self.render($0) }
    for (name, bytes) in greyFlavours {
      let card = try Self.withCatalog(files: ["p.png": bytes]) { try Self.render($0) }
      #expect(card.rgba == greyReference.rgba, "\(name) differs from 8-bit RGB grey")
    }
  }

  /// A large PNG for a small card is averaged down as it streams in: the edge between its black
  /// and white halves stays sharp and in place, interlaced or not.
  @Test func largePNGIsReducedWhileDecoding() throws {
    let size = Preset.custom(try CanvasSize(width: 240, height: 200))
    let halves: (Int, Int) -> [Int] = { x, _ in [x < 1200 ? 0 : 255] }
    var cards: [DecodedImage] = []
    for interlaced in [false, true] {
      let png = try PictureFixtures.png(
        width: 2400, height: 2000, colourType: 0, bitDepth: 8, interlaced: interlaced,
        sample: halves)
      cards.append(
        try Self.withCatalog(files: ["big.png": png]) { folder in
          // A focus clear of the text, so the crop stays centred and the edge in place.
          try folder.writeText(#"[{"file": "big.png", "focus": [0.15, 0.15]}]"#, to: "pictures.json")
          return try Self.render(folder, preset: size)
        })
    }
    let card = cards[0]
    for y in [0, card.height - 1] {
      #expect(card.luma(119, y) < 1 && card.luma(120, y) > 254, "row \(y): \(card.pixel(119, y)) \(card.pixel(120, y))")
    }
    #expect(cards[0].rgba == cards[1].rgba, "interlaced and plain PNGs give different cards")
  }
}

/// A value handed from one thread to another under a lock.
final class ResultBox<T>: @unchecked Sendable {
  let lock = NSLock()
  var value: T?
}

extension Array {
  func repeated(_ count: Int) -> [Element] { Array([[Element]](repeating: self, count: count).joined()) }
}
