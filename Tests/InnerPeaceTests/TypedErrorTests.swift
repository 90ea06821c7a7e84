import Foundation
import Testing

@testable import InnerPeace

/// Errors keep the type they start with: the decoder's, the encoder's and the JPEG-with-alpha
/// rule each have a case of their own, and no message wraps another's description.
@Suite("Typed errors")
struct TypedErrorTests {
  /// A photo cut short: the decoder's own case, with the reason only.
  @Test func corruptImageIsADecodingError() throws {
    let bytes = Array(try bundledPhotoBytes().prefix(700))
    let error = innerPeaceError { try ImageDecoding.decode(bytes, covering: (200, 200)) }
    guard case .decodingFailed(let reason)? = error else {
      Issue.record("expected decodingFailed, got \(String(describing: error))")
      return
    }
    #expect(!reason.isEmpty)
    let message = error?.description ?? ""
    #expect(!message.contains("render failed"), "\(message)")
    #expect(message == "the image cannot be decoded: \(reason)")
  }

  /// A catalog photo whose damage only its decode finds (a scan cut short, given an end-of-image
  /// marker: the load's structural check passes it): named in the error, with the decoder's
  /// reason as it is, not "render failed: ...". A photo damaged after the catalog loaded is not
  /// decoded at all: it has changed (``InnerPeaceError/pictureChanged(name:)``).
  @Test func photoDamagedAfterLoadIsUndecodableNotARenderFailure() throws {
    let good = try PictureFixtures.noiseJPEG(width: 256, height: 256)
    let cut = Array(good.prefix(good.count * 3 / 10)) + [0xFF, 0xD9]
    try PictureTests.withCatalog(files: ["photo.jpg": try bundledPhotoBytes()]) { folder in
      let renderer = try CardRenderer(catalog: try Catalog(directory: folder), backgroundCacheBytes: 0)
      try folder.writeBytes(cut, to: "photo.jpg")
      let changed = innerPeaceError { try renderer.render(CardRequest(preset: .og, quote: .index(0), seed: 1)) }
      #expect(changed == .pictureChanged(name: "photo.jpg"))
    }
    try PictureTests.withCatalog(files: ["photo.jpg": cut]) { folder in
      let renderer = try CardRenderer(catalog: try Catalog(directory: folder), backgroundCacheBytes: 0)
      let error = innerPeaceError { try renderer.render(CardRequest(preset: .og, quote: .index(0), seed: 1)) }
      guard case .pictureUndecodable(let name, let reason)? = error else {
        Issue.record("expected pictureUndecodable, got \(String(describing: error))")
        return
      }
      #expect(name == "photo.jpg")
      let decoderError = innerPeaceError { try ImageDecoding.decode(cut, covering: (1200, 630)) }
      #expect(decoderError == .decodingFailed(reason: reason))
      let message = error?.description ?? ""
      #expect(message == "picture 'photo.jpg' cannot be decoded: \(reason)")
      #expect(!message.contains("render failed"), "\(message)")
    }
  }

  /// One rule, one message: the request check, the renderer and the encoder agree.
  @Test func jpegWithAlphaIsOneCheck() throws {
    #expect(!ImageFormat.jpeg.carriesAlpha && ImageFormat.png.carriesAlpha && ImageFormat.webp.carriesAlpha)
    for format in ImageFormat.allCases {
      try format.validate(transparent: false)
      if format != .jpeg { try format.validate(transparent: true) }
    }
    let rule = innerPeaceError { try ImageFormat.jpeg.validate(transparent: true) }
    #expect(rule == .transparencyUnsupported(format: .jpeg))
    let reason = rule?.description ?? ""
    #expect(reason.contains("JPEG") && !reason.contains("--"))
    let rendered = innerPeaceError {
      try Fixtures.renderer.render(CardRequest(preset: .og, seed: 1, format: .jpeg, transparent: true))
    }
    let encoded = innerPeaceError {
      try ImageEncoding.encode(try ImageSurface(format: .argb32, width: 8, height: 8), as: .jpeg)
    }
    #expect(rendered == rule)
    #expect(encoded == rule)
  }

  @Test func encoderAndRendererFailuresReadApart() {
    let encoding = InnerPeaceError.encodingFailed(format: .webp, reason: "out of memory")
    #expect(encoding.description == "the card cannot be encoded as webp: out of memory")
    #expect(!InnerPeaceError.decodingFailed(reason: "r").description.contains("render failed"))
  }
}

/// The one stride copy, both ways between packed rows and a surface's padded ones.
@Suite("Row copies")
struct RowCopyTests {
  @Test func copiesRowsBetweenStrides() {
    let width = 5
    let height = 3
    let packed = (0..<(width * height)).map { UInt8($0 + 1) }
    var padded = [UInt8](repeating: 0, count: 8 * height)
    packed.withUnsafeBufferPointer { source in
      padded.withUnsafeMutableBufferPointer { target in
        copyRows(
          height, bytesPerRow: width, from: source.baseAddress!, stride: width, to: target.baseAddress!, stride: 8)
      }
    }
    #expect(padded == [1, 2, 3, 4, 5, 0, 0, 0, 6, 7, 8, 9, 10, 0, 0, 0, 11, 12, 13, 14, 15, 0, 0, 0])
    var back = [UInt8](repeating: 0, count: width * height)
    padded.withUnsafeBufferPointer { source in
      back.withUnsafeMutableBufferPointer { target in
        copyRows(
          height, bytesPerRow: width, from: source.baseAddress!, stride: 8, to: target.baseAddress!, stride: width)
      }
    }
    #expect(back == packed)
    var same = [UInt8](repeating: 0, count: width * height)
    packed.withUnsafeBufferPointer { source in
      same.withUnsafeMutableBufferPointer { target in
        copyRows(
          height, bytesPerRow: width, from: source.baseAddress!, stride: width, to: target.baseAddress!, stride: width)
      }
    }
    #expect(same == packed)
  }

  @Test func pixelsRoundTripThroughASurface() throws {
    // RGB24 rows are packed at Cairo's stride (one copy); an A8 row of 3 bytes is padded to 4
    // (a copy a row).
    let pixels = Pixels(width: 3, height: 2, bytes: (0..<24).map { UInt8($0) })
    let surface = try ImageSurface(format: .rgb24, width: 3, height: 2)
    pixels.copy(into: surface)
    #expect(Pixels(copying: surface).bytes == pixels.bytes)
    let mask = try ImageSurface(mask: [1, 2, 3, 4, 5, 6], width: 3, height: 2)
    #expect(mask.stride > 3)
    #expect(mask.packedRows(bytesPerRow: 3) == [1, 2, 3, 4, 5, 6])
  }
}

/// Every stage of a render from a photo is timed, through the one clock.
@Suite("Stage timings")
struct StageTimingTests {
  @Test func everyStageOfAPhotoCardIsTimed() throws {
    let renderer = try CardRenderer(catalog: Fixtures.catalog, backgroundCacheBytes: 0)
    let card = try renderer.render(CardRequest(preset: .og, quote: .index(0), seed: 1))
    let timings = card.timings
    for (stage, value) in [
      ("decode", timings.decode), ("scale", timings.scale), ("fit", timings.fit), ("blur", timings.blur),
      ("draw", timings.draw), ("encode", timings.encode),
    ] {
      #expect(value > 0, "\(stage) was not timed")
    }
    #expect(
      abs(timings.total - (timings.decode + timings.scale + timings.fit + timings.blur + timings.draw + timings.encode))
        < 1e-12)
  }

  @Test func clockAddsUpAndPassesValuesThrough() throws {
    let clock = StageClock()
    let value = clock.measure(.fit) { () -> Int in
      Thread.sleep(forTimeInterval: 0.001)
      return 42
    }
    #expect(value == 42)
    let error = innerPeaceError {
      try clock.measure(.encode) { () throws(InnerPeaceError) -> Int in
        Thread.sleep(forTimeInterval: 0.001)
        throw .renderFailed(reason: "r")
      }
    }
    #expect(error == .renderFailed(reason: "r"))
    #expect(clock.timings.fit > 0 && clock.timings.encode > 0 && clock.timings.decode == 0)
  }
}
