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

/// What a user reads: every case of every error type of the core is one line in neutral words
/// (no command-line option, no HTTP parameter: the CLI and the service add their own, in one
/// place each), and each type holds only what its own code can throw.
@Suite("Error messages")
struct ErrorMessageTests {
  /// One value of every case: a case added to a type breaks the exhaustive `tag` switches below,
  /// and one without a sample here fails ``everyCaseHasASample()``.
  static let renderErrors: [InnerPeaceError] = [
    .catalogUnreadable(file: "quotes.json", reason: "r"), .catalogMalformed(file: "f", line: 1, column: 2, reason: "r"),
    .catalogInvalid(file: "f", reason: "r"), .pictureMissing(name: "n"), .pictureNameInvalid(name: "../n"),
    .pictureUnknown(name: "n"), .pictureUndecodable(name: "n", reason: "r"), .pictureChanged(name: "n"),
    .decodingFailed(reason: "r"), .quoteIndexOutOfRange(index: 5, count: 3), .textInvalid(reason: "r"),
    .authorInvalid(reason: "r"), .presetUnknown("p"), .sizeInvalid(reason: "r"), .formatUnknown("gif"),
    .transparencyUnsupported(format: .jpeg), .fontsUnavailable(reason: "r"), .renderFailed(reason: "r"),
    .encodingFailed(format: .webp, reason: "r"),
  ]
  static let planErrors: [BatchPlanError] = [
    .shardMalformed("1-2"), .shardOutOfRange(index: 3, count: 2), .presetListEmpty,
    .quoteCountOutOfRange(0, maximum: 50),
  ]
  static let scheduleErrors: [ScheduleError] = [.dayCountOutOfRange(400, maximum: 366), .hourOutOfRange(24)]

  static func tag(_ error: InnerPeaceError) -> String {
    switch error {
    case .catalogUnreadable: "catalogUnreadable"
    case .catalogMalformed: "catalogMalformed"
    case .catalogInvalid: "catalogInvalid"
    case .pictureMissing: "pictureMissing"
    case .pictureNameInvalid: "pictureNameInvalid"
    case .pictureUnknown: "pictureUnknown"
    case .pictureUndecodable: "pictureUndecodable"
    case .pictureChanged: "pictureChanged"
    case .decodingFailed: "decodingFailed"
    case .quoteIndexOutOfRange: "quoteIndexOutOfRange"
    case .textInvalid: "textInvalid"
    case .authorInvalid: "authorInvalid"
    case .presetUnknown: "presetUnknown"
    case .sizeInvalid: "sizeInvalid"
    case .formatUnknown: "formatUnknown"
    case .transparencyUnsupported: "transparencyUnsupported"
    case .fontsUnavailable: "fontsUnavailable"
    case .renderFailed: "renderFailed"
    case .encodingFailed: "encodingFailed"
    }
  }

  static func tag(_ error: BatchPlanError) -> String {
    switch error {
    case .shardMalformed: "shardMalformed"
    case .shardOutOfRange: "shardOutOfRange"
    case .presetListEmpty: "presetListEmpty"
    case .quoteCountOutOfRange: "quoteCountOutOfRange"
    }
  }

  static func tag(_ error: ScheduleError) -> String {
    switch error {
    case .dayCountOutOfRange: "dayCountOutOfRange"
    case .hourOutOfRange: "hourOutOfRange"
    }
  }

  @Test func everyCaseHasASample() {
    #expect(Set(Self.renderErrors.map(Self.tag)).count == 19)
    #expect(Set(Self.planErrors.map(Self.tag)).count == 4)
    #expect(Set(Self.scheduleErrors.map(Self.tag)).count == 2)
  }

  /// One line, not empty, no option name (`--count`) and no other error's description inside.
  @Test func everyMessageIsOneNeutralLine() {
    let messages =
      Self.renderErrors.map(\.description) + Self.planErrors.map(\.description)
      + Self.scheduleErrors.map(\.description)
    for message in messages {
      #expect(!message.isEmpty && !message.contains("\n") && !message.contains("\r"), "\(message)")
      #expect(!message.contains("--"), "a core message names an option: \(message)")
      #expect(!message.contains("InnerPeaceError") && !message.contains("Error("), "\(message)")
    }
    // The plan's and the schedule's messages start with the value's own name, which the command
    // line turns into its option (`count 0 ...` → `--count 0 ...`).
    #expect(BatchPlanError.quoteCountOutOfRange(0, maximum: 50).description.hasPrefix("count 0 "))
    #expect(BatchPlanError.shardMalformed("x").description.hasPrefix("shard 'x' "))
    #expect(ScheduleError.dayCountOutOfRange(0, maximum: 366).description.hasPrefix("days 0 "))
    #expect(ScheduleError.hourOutOfRange(24).description.hasPrefix("hour 24 "))
  }

  /// The render's errors are the renderer's only: a batch plan and a schedule throw their own
  /// types, so the service (which renders) never carries a case it cannot reach.
  @Test func batchAndScheduleRulesThrowTheirOwnTypes() throws {
    let catalog = Fixtures.catalog
    #expect(thrownError(BatchPlanError.self) { try BatchPlan(catalog: catalog, presets: []) } == .presetListEmpty)
    #expect(thrownError(BatchPlanError.self) { try Shard(parsing: "0/0") } == .shardOutOfRange(index: 0, count: 0))
    let schedule = thrownError(ScheduleError.self) {
      try DailySchedule(catalog: catalog, from: Date(), hour: 24, timeZone: TimeZone(identifier: "UTC")!, seed: nil)
    }
    #expect(schedule == .hourOutOfRange(24))
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
  }

  /// Each measure adds what the clock says passed, to its own stage, also when the body throws;
  /// the clock here is the test's, moving one millisecond at each reading.
  @Test func clockAddsUpAndPassesValuesThrough() throws {
    let start = ContinuousClock.now
    var readings = 0
    let clock = StageClock(now: {
      defer { readings += 1 }
      return start.advanced(by: .milliseconds(readings))
    })
    let value = clock.measure(.fit) { () -> Int in 42 }
    #expect(value == 42)
    let error = innerPeaceError {
      try clock.measure(.encode) { () throws(InnerPeaceError) -> Int in throw .renderFailed(reason: "r") }
    }
    #expect(error == .renderFailed(reason: "r"))
    _ = clock.measure(.fit) { 0 }
    #expect(abs(clock.timings.fit - 0.002) < 1e-12, "two measures of 1 ms: \(clock.timings.fit)")
    #expect(abs(clock.timings.encode - 0.001) < 1e-12, "the throwing measure: \(clock.timings.encode)")
    #expect(clock.timings.decode == 0 && clock.timings.draw == 0)
  }

}
