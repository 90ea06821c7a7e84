import CInnerPeace
import CInnerPeaceCodecs
import Foundation
import Testing

@testable import InnerPeace

/// Decoding only the part of a photo that a card shows (``ImageDecoding/decode(_:covering:part:)``,
/// ``BackgroundScaler/shownPart(decoded:canvas:crop:)``) paints the same canvas as decoding it
/// whole: every bundled photo, at every preset and some odd canvases, every zoom of the focus
/// crop and places from one edge to the other. And a photo it cannot decode a part of (damaged,
/// progressive) gives the whole decode's outcome.
@Suite struct PhotoPartTests {
  static let canvases: [(Int, Int)] = [(1200, 630), (2048, 1536), (1080, 1080), (1080, 1920), (200, 200), (333, 1777)]
  static let places: [(Double, Double)] = [(0, 1), (0.37, 0.5), (1, 0)]

  /// The canvas `photo` paints at `canvas` for `crop`.
  static func painted(_ photo: DecodedPhoto, canvas: (Int, Int), crop: FocusCrop) throws -> [UInt8] {
    let surface = try ImageSurface(format: .rgb24, width: canvas.0, height: canvas.1)
    try BackgroundScaler.cover(photo, onto: surface, crop: crop)
    return surface.packedRows(bytesPerRow: canvas.0 * 4)
  }

  static func covering(_ canvas: (Int, Int), _ zoom: Double) -> (width: Int, height: Int) {
    (Int((Double(canvas.0) * zoom).rounded(.up)), Int((Double(canvas.1) * zoom).rounded(.up)))
  }

  @Test(arguments: try Catalog.bundled().pictures)
  func aPartPaintsTheWholeDecodesPixels(picture: String) throws {
    let bytes = try Catalog.bundled().readPicture(picture)
    var parts = 0
    var differing: [String] = []
    for canvas in Self.canvases {
      for zoom in FocusCrop.zooms {
        let covering = Self.covering(canvas, zoom)
        let whole = DecodedPhoto(whole: try ImageDecoding.decode(bytes, covering: covering, decoder: .turboJPEG))
        for (shiftX, shiftY) in Self.places {
          let crop = FocusCrop(zoom: zoom, shiftX: shiftX, shiftY: shiftY)
          let part = try ImageDecoding.decode(bytes, covering: covering) {
            BackgroundScaler.shownPart(decoded: $0, canvas: canvas, crop: crop)
          }
          #expect(part.pixels.width == whole.pixels.width && part.pixels.height == whole.pixels.height)
          if part.part != nil { parts += 1 }
          // Bools, not arrays: swift-testing's diff of two large arrays takes minutes.
          if try Self.painted(part, canvas: canvas, crop: crop) != Self.painted(whole, canvas: canvas, crop: crop) {
            differing.append("\(canvas.0)x\(canvas.1) zoom \(zoom) at (\(shiftX), \(shiftY))")
          }
        }
      }
    }
    #expect(differing.isEmpty, "\(picture): the part paints other pixels at \(differing)")
    // Most of these crops show a part of the photo: the part's decode must have run for them.
    #expect(parts >= Self.canvases.count * FocusCrop.zooms.count * Self.places.count / 3, "\(picture): \(parts) parts")
  }

  /// libjpeg's scaled inverse DCTs in AVX-512 (``innerpeace_jpeg_vector_idct_available``) give
  /// libjpeg's own bytes for any block: random blocks of nine kinds (photo-like, any value, the
  /// extremes, a DC alone, empty) through each of the six, compared with libjpeg's functions.
  @Test func vectorInverseDCTsGiveLibjpegsBytes() {
    let mismatches = innerpeace_jpeg_vector_idct_mismatches(21, 60_000)
    if innerpeace_jpeg_vector_idct_available() == 1 {
      #expect(mismatches == 0, "\(mismatches) of 60000 blocks differ")
    } else {
      #expect(mismatches == -1)
    }
  }

  /// The part's decoder (libjpeg's crop and skip, and the AVX-512 inverse DCTs where there are
  /// any) asked for the whole image, and the whole decode (which takes it at 5/8 to 7/8), give
  /// TurboJPEG's decode, byte for byte, at each of the eight scalings: every bundled photo, and
  /// made ones (4:2:0, 4:4:4 and grey noise at quality 100, whose coefficients are large, at odd
  /// sizes).
  @Test func everyScalingDecodesTheWholeDecodesBytes() throws {
    let catalog = try Catalog.bundled()
    var photos = try catalog.pictures.map { ($0, try catalog.readPicture($0)) }
    let (width, height) = (333, 217)
    let noise = PictureFixtures.noise(count: width * height * 3, seed: 5)
    func made(_ channels: Int, _ subsampling: TJSAMP) throws -> [UInt8] {
      try PictureFixtures.jpeg(
        width: width, height: height, channels: channels, pixels: Array(noise[0..<(width * height * channels)]),
        quality: 100, subsampling: subsampling)
    }
    photos += [
      ("4:2:0", try made(3, TJSAMP_420)), ("4:4:4", try made(3, TJSAMP_444)), ("grey", try made(1, TJSAMP_444)),
    ]
    var differing: [String] = []
    for (name, bytes) in photos {
      guard case .success(let header) = ImageDecoding.inspect(bytes) else {
        Issue.record("\(name): not a readable photo")
        continue
      }
      for eighths in 1...8 {
        let covering = (header.storedWidth * eighths / 8, header.storedHeight * eighths / 8)
        let whole = try ImageDecoding.decode(bytes, covering: covering, decoder: .turboJPEG)
        let part = try ImageDecoding.decode(bytes, covering: covering) { (0, 0, $0.width, $0.height) }
        let fastest = try ImageDecoding.decode(bytes, covering: covering)
        #expect(part.part != nil, "\(name) at \(eighths)/8: decoded whole, not through the part's decoder")
        #expect(whole.width == (header.storedWidth * eighths + 7) / 8, "\(name) at \(eighths)/8: \(whole.width)")
        if part.pixels.bytes != whole.bytes { differing.append("\(name) at \(eighths)/8, the part") }
        if fastest.bytes != whole.bytes { differing.append("\(name) at \(eighths)/8, the whole") }
      }
    }
    #expect(differing.isEmpty, "other bytes than TurboJPEG's: \(differing)")
  }

  /// The part is the pixels shown and the filter's reach, inside the decoded image, and none when
  /// that is nearly all of it.
  @Test func theShownPart() throws {
    let centred = try #require(
      BackgroundScaler.shownPart(
        decoded: (1200, 750), canvas: (1200, 630), crop: FocusCrop(zoom: 1.3, shiftX: 0.5, shiftY: 0.5)))
    // 1200 x 630 shown at 1.3 times: 923 x 485 pixels of the decode, centred, and 4 around.
    #expect(centred.x == 134 && centred.width == 932, "\(centred)")
    #expect(centred.y == 128 && centred.height == 494, "\(centred)")
    let corner = try #require(
      BackgroundScaler.shownPart(
        decoded: (1200, 750), canvas: (1200, 630), crop: FocusCrop(zoom: 1.3, shiftX: 0, shiftY: 1)))
    #expect(corner.x == 0 && corner.y + corner.height == 750, "\(corner)")
    #expect(BackgroundScaler.shownPart(decoded: (1200, 630), canvas: (1200, 630), crop: .centred) == nil)
    #expect(BackgroundScaler.shownPart(decoded: (1200, 660), canvas: (1200, 630), crop: .centred) == nil)
  }

  /// Damage in the photo's coded data, above, inside or below the part: the part's decode stops
  /// at the warning, and the whole decode gives its usual outcome (the same canvas, or the same
  /// error). Before the part's decode read the rows below it (a skip to the last row reads
  /// nothing), damage at 0.35 and 0.9 gave a card where the whole decode gives an error. The
  /// whole decode at 6/8 (through libjpeg's rows first) gives TurboJPEG's outcome too.
  @Test(arguments: [0.35, 0.6, 0.9])
  func damageGivesTheWholeDecodesOutcome(at fraction: Double) throws {
    var bytes = try Catalog.bundled().readPicture("aqua.jpg")
    // Bytes in the entropy-coded data (after the headers, before the end-of-image marker) set to
    // a run of the same value: a Huffman code that does not exist, or a wrong coefficient count.
    let at = Int(Double(bytes.count) * fraction)
    for index in at..<(at + 64) where bytes[index] != 0xFF { bytes[index] = 0xFE }
    let canvas = (1200, 630)
    let crop = FocusCrop(zoom: 1.3, shiftX: 0.5, shiftY: 0)
    let covering = Self.covering(canvas, crop.zoom)
    let whole = Result { () throws(InnerPeaceError) in
      try ImageDecoding.decode(bytes, covering: covering, decoder: .turboJPEG)
    }
    let part = Result { () throws(InnerPeaceError) in
      try ImageDecoding.decode(bytes, covering: covering) {
        BackgroundScaler.shownPart(decoded: $0, canvas: canvas, crop: crop)
      }
    }
    let fastest = Result { () throws(InnerPeaceError) in try ImageDecoding.decode(bytes, covering: covering) }
    switch (whole, fastest) {
    case (.success(let pixels), .success(let decoded)): #expect(pixels.bytes == decoded.bytes)
    case (.failure(let wholeError), .failure(let fastestError)): #expect(wholeError == fastestError)
    default: Issue.record("TurboJPEG's whole decode and libjpeg's rows' differ in outcome")
    }
    switch (whole, part) {
    case (.success(let pixels), .success(let decoded)):
      // Decoded whole after a warning; or a part, when the damage decodes without one (bytes
      // that are valid codes, for other coefficients): the same pixels either way.
      #expect(
        try Self.painted(decoded, canvas: canvas, crop: crop)
          == Self.painted(DecodedPhoto(whole: pixels), canvas: canvas, crop: crop))
    case (.failure(let wholeError), .failure(let partError)):
      #expect(wholeError == partError)
    default:
      Issue.record(
        "the whole decode gave \(whole.map { _ in "pixels" }), the part's \(part.map { "pixels, part \(String(describing: $0.part))" })"
      )
    }
  }

  /// Photos made here: grey, 4:2:0 and with a Display P3 profile (parts, the same canvas as
  /// whole), progressive (decoded whole: libjpeg cannot skip a progressive file's rows).
  @Test func madePhotos() throws {
    let (width, height) = (1600, 1000)
    let noise = PictureFixtures.noise(count: width * height * 3, seed: 11)
    let grey = try PictureFixtures.jpeg(
      width: width, height: height, channels: 1, pixels: PictureFixtures.noise(count: width * height, seed: 12))
    let subsampled = try PictureFixtures.jpeg(
      width: width, height: height, channels: 3, pixels: noise, subsampling: TJSAMP_420)
    let profiled = ColourManagementTests.withProfile(
      subsampled, try ColourManagementTests.rgbProfile(primaries: ColourManagementTests.p3Primaries))
    let progressive = try PictureFixtures.jpeg(
      width: width, height: height, channels: 3, pixels: noise, subsampling: TJSAMP_420, progressive: true)
    let canvas = (1200, 630)
    let crop = FocusCrop(zoom: 1.3, shiftX: 0.2, shiftY: 0.7)
    let covering = Self.covering(canvas, crop.zoom)
    for (name, bytes, decodesPart) in [
      ("grey", grey, true), ("4:2:0", subsampled, true), ("P3", profiled, true), ("progressive", progressive, false),
    ] {
      let whole = DecodedPhoto(whole: try ImageDecoding.decode(bytes, covering: covering, decoder: .turboJPEG))
      let part = try ImageDecoding.decode(bytes, covering: covering) {
        BackgroundScaler.shownPart(decoded: $0, canvas: canvas, crop: crop)
      }
      #expect((part.part != nil) == decodesPart, "\(name)")
      #expect(
        try Self.painted(part, canvas: canvas, crop: crop) == Self.painted(whole, canvas: canvas, crop: crop),
        "\(name)")
    }
  }
}
