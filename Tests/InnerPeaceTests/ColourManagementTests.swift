import CInnerPeace
import Foundation
import InnerPeace
import Testing

/// Photos whose file says their colours are not sRGB (an ICC profile, PNG gAMA/cHRM) are drawn
/// converted to sRGB; photos in sRGB and photos with a profile that cannot be used are drawn as
/// they are. Before, every photo was drawn as if it were sRGB.
@Suite("Colour management")
struct ColourManagementTests {
  typealias RGB = (r: Int, g: Int, b: Int)

  // MARK: Fixtures

  /// sRGB's primaries and Display P3's and Adobe RGB's, all with the D65 white point.
  static let d65 = (0.3127, 0.3290)
  static let sRGBPrimaries = [(0.64, 0.33), (0.30, 0.60), (0.15, 0.06)]
  static let p3Primaries = [(0.680, 0.320), (0.265, 0.690), (0.150, 0.060)]
  static let adobePrimaries = [(0.64, 0.33), (0.21, 0.71), (0.15, 0.06)]
  /// Adobe RGB (1998)'s encoding exponent.
  static let adobeGamma = 563.0 / 256.0

  /// An ICC profile made with LittleCMS: D65 white, these primaries, sRGB's tone curve or a pure
  /// power `gamma`.
  static func rgbProfile(primaries: [(Double, Double)], gamma: Double? = nil) throws -> [UInt8] {
    let curve = try toneCurve(gamma)
    defer { cmsFreeToneCurve(curve) }
    var white = cmsCIExyY(x: d65.0, y: d65.1, Y: 1)
    var triple = cmsCIExyYTRIPLE(
      Red: cmsCIExyY(x: primaries[0].0, y: primaries[0].1, Y: 1),
      Green: cmsCIExyY(x: primaries[1].0, y: primaries[1].1, Y: 1),
      Blue: cmsCIExyY(x: primaries[2].0, y: primaries[2].1, Y: 1))
    let curves: [OpaquePointer?] = [curve, curve, curve]
    let profile = try #require(curves.withUnsafeBufferPointer { cmsCreateRGBProfile(&white, &triple, $0.baseAddress) })
    defer { cmsCloseProfile(profile) }
    return try save(profile)
  }

  /// A grey ICC profile with a pure power tone curve.
  static func greyProfile(gamma: Double) throws -> [UInt8] {
    let curve = try toneCurve(gamma)
    defer { cmsFreeToneCurve(curve) }
    let profile = try #require(cmsCreateGrayProfile(cmsD50_xyY(), curve))
    defer { cmsCloseProfile(profile) }
    return try save(profile)
  }

  static func toneCurve(_ gamma: Double?) throws -> OpaquePointer {
    if let gamma { return try #require(cmsBuildGamma(nil, gamma)) }
    let parameters: [Double] = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
    return try #require(cmsBuildParametricToneCurve(nil, 4, parameters))
  }

  static func save(_ profile: cmsHPROFILE) throws -> [UInt8] {
    var size: cmsUInt32Number = 0
    guard cmsSaveProfileToMem(profile, nil, &size) != 0, size > 0 else {
      throw PictureFixtures.Failure(description: "LittleCMS could not size the profile")
    }
    var bytes = [UInt8](repeating: 0, count: Int(size))
    guard bytes.withUnsafeMutableBytes({ cmsSaveProfileToMem(profile, $0.baseAddress, &size) }) != 0 else {
      throw PictureFixtures.Failure(description: "LittleCMS could not save the profile")
    }
    return bytes
  }

  /// A flat JPEG of one colour (grey when `rgb` has one value).
  static func flatJPEG(_ colour: [UInt8]) throws -> [UInt8] {
    try PictureFixtures.jpeg(width: 64, height: 64, channels: colour.count, pixels: colour.repeated(64 * 64))
  }

  /// The same JPEG with `profile` in APP2 ICC_PROFILE segments of at most `segmentBytes` each,
  /// right after SOI, written in `order` (sequence numbers from 1; all of them, in order, if nil).
  /// `count` overrides the segment count the segments claim.
  static func withProfile(
    _ jpeg: [UInt8], _ profile: [UInt8], segmentBytes: Int = 65_519, order: [Int]? = nil, count: Int? = nil
  ) -> [UInt8] {
    let parts = stride(from: 0, to: profile.count, by: segmentBytes).map {
      Array(profile[$0..<min($0 + segmentBytes, profile.count)])
    }
    var segments: [UInt8] = []
    for number in order ?? Array(1...parts.count) {
      let body = Array("ICC_PROFILE".utf8) + [0, UInt8(number), UInt8(count ?? parts.count)] + parts[number - 1]
      let length = body.count + 2
      segments += [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + body
    }
    return [0xFF, 0xD8] + segments + jpeg.dropFirst(2)
  }

  /// A flat 64 x 64 PNG of one colour (grey when it has one value, RGBA when four) with these
  /// chunks after IHDR.
  static func flatPNG(_ colour: [Int], chunks: [(String, [UInt8])]) throws -> [UInt8] {
    let colourType: UInt8 = [1: 0, 3: 2, 4: 6][colour.count]!
    return try PictureFixtures.png(
      width: 64, height: 64, colourType: colourType, bitDepth: 8, extraChunks: chunks
    ) { _, _ in colour }
  }

  static func iCCP(_ profile: [UInt8]) throws -> (String, [UInt8]) {
    ("iCCP", Array("Display P3".utf8) + [0, 0] + (try PictureFixtures.zlib(profile)))
  }

  static func gAMA(_ value: Int) -> (String, [UInt8]) { ("gAMA", PictureFixtures.be32(value)) }

  static func cHRM(_ values: [Double]) -> (String, [UInt8]) {
    ("cHRM", values.flatMap { PictureFixtures.be32(Int(($0 * 100_000).rounded())) })
  }

  // MARK: The expected colours, worked out independently of LittleCMS

  /// The RGB to XYZ matrix of a space with these primaries and the D65 white (rows X, Y, Z).
  static func toXYZ(_ primaries: [(Double, Double)]) -> [[Double]] {
    func xyz(_ p: (Double, Double)) -> [Double] { [p.0 / p.1, 1, (1 - p.0 - p.1) / p.1] }
    let columns = primaries.map(xyz)
    let white = xyz(d65)
    let scale = solve(transpose(columns), white)
    return (0..<3).map { row in (0..<3).map { column in columns[column][row] * scale[column] } }
  }

  static func transpose(_ m: [[Double]]) -> [[Double]] { (0..<3).map { r in (0..<3).map { c in m[c][r] } } }

  /// Solves m x = v (Cramer's rule; these matrices are well conditioned).
  static func solve(_ m: [[Double]], _ v: [Double]) -> [Double] {
    func det(_ a: [[Double]]) -> Double {
      a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
        + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])
    }
    let d = det(m)
    return (0..<3).map { column in
      var replaced = m
      for row in 0..<3 { replaced[row][column] = v[row] }
      return det(replaced) / d
    }
  }

  static func sRGBDecode(_ v: Double) -> Double { v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4) }
  static func sRGBEncode(_ v: Double) -> Double { v <= 0.0031308 ? 12.92 * v : 1.055 * pow(v, 1 / 2.4) - 0.055 }

  /// The sRGB colour of `colour` in a D65 space with these primaries and tone curve (sRGB's when
  /// `gamma` is nil), clipped per channel as a colorimetric conversion does.
  static func expected(_ colour: [Int], primaries: [(Double, Double)], gamma: Double? = nil) -> RGB {
    let linear = colour.map { value -> Double in
      let v = Double(value) / 255
      return gamma.map { pow(v, $0) } ?? sRGBDecode(v)
    }
    let m = toXYZ(primaries)
    let xyz = (0..<3).map { row in (0..<3).reduce(0.0) { $0 + m[row][$1] * linear[$1] } }
    let out = solve(toXYZ(sRGBPrimaries), xyz).map {
      Int((255 * sRGBEncode(min(1, max(0, $0)))).rounded())
    }
    return (out[0], out[1], out[2])
  }

  /// The colour of the card's top left corner, where the photo shows as it is.
  static func drawnColour(_ bytes: [UInt8], name: String) throws -> RGB {
    try PictureTests.withCatalog(files: [name: bytes]) { folder in
      let p = try PictureTests.render(folder).pixel(0, 0)
      return (p.r, p.g, p.b)
    }
  }

  static func expectClose(
    _ drawn: RGB, _ wanted: RGB, _ what: String, tolerance: Int = 2, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let close =
      abs(drawn.r - wanted.r) <= tolerance && abs(drawn.g - wanted.g) <= tolerance
      && abs(drawn.b - wanted.b) <= tolerance
    #expect(close, "\(what): drawn \(drawn), expected \(wanted)", sourceLocation: sourceLocation)
  }

  // MARK: Converted

  /// The colour, P3 (200, 60, 40), is out of sRGB's gamut: sRGB (217, 42, 23) clipped;
  /// (180, 120, 100) is inside it. One APP2 segment, and the profile split over three segments
  /// written out of order (libjpeg puts them back in sequence order).
  @Test(arguments: [[200, 60, 40], [180, 120, 100]], [false, true])
  func displayP3JPEGIsDrawnInSRGB(colour: [Int], split: Bool) throws {
    let profile = try Self.rgbProfile(primaries: Self.p3Primaries)
    let jpeg = Self.withProfile(
      try Self.flatJPEG(colour.map(UInt8.init)), profile, segmentBytes: split ? profile.count / 3 + 1 : 65_519,
      order: split ? [2, 3, 1] : nil)
    let wanted = Self.expected(colour, primaries: Self.p3Primaries)
    if colour == [200, 60, 40] { #expect(wanted == (217, 42, 23)) }
    Self.expectClose(try Self.drawnColour(jpeg, name: "p3.jpg"), wanted, "P3 \(colour)")
  }

  @Test func adobeRGBJPEGIsDrawnInSRGB() throws {
    let profile = try Self.rgbProfile(primaries: Self.adobePrimaries, gamma: Self.adobeGamma)
    let colour = [100, 180, 90]
    let jpeg = Self.withProfile(try Self.flatJPEG(colour.map(UInt8.init)), profile)
    let wanted = Self.expected(colour, primaries: Self.adobePrimaries, gamma: Self.adobeGamma)
    Self.expectClose(try Self.drawnColour(jpeg, name: "adobe.jpg"), wanted, "Adobe RGB \(colour)")
  }

  /// Opaque (converted once reduced) and with an alpha channel (converted row by row, before the
  /// alpha is multiplied in).
  @Test(arguments: [false, true])
  func displayP3PNGIsDrawnInSRGB(alpha: Bool) throws {
    let colour = [180, 120, 100]
    let png = try Self.flatPNG(
      colour + (alpha ? [255] : []), chunks: [try Self.iCCP(try Self.rgbProfile(primaries: Self.p3Primaries))])
    let wanted = Self.expected(colour, primaries: Self.p3Primaries)
    Self.expectClose(try Self.drawnColour(png, name: "p3.png"), wanted, "P3 PNG \(colour)", tolerance: 1)
  }

  /// gAMA 1.0: the samples are linear light, so 128 is sRGB 188.
  @Test func pngWithGammaOnlyIsDrawnInSRGB() throws {
    let colour = [128, 64, 200]
    let png = try Self.flatPNG(colour, chunks: [Self.gAMA(100_000)])
    let wanted = Self.expected(colour, primaries: Self.sRGBPrimaries, gamma: 1)
    Self.expectClose(try Self.drawnColour(png, name: "linear.png"), wanted, "linear PNG \(colour)", tolerance: 1)
    let grey = try Self.flatPNG([128], chunks: [Self.gAMA(100_000)])
    Self.expectClose(try Self.drawnColour(grey, name: "linear-grey.png"), (188, 188, 188), "linear grey PNG")
  }

  /// cHRM with P3's primaries and gAMA 1/2.2 describe a P3-like space.
  @Test func pngWithChromaticitiesIsDrawnInSRGB() throws {
    let colour = [180, 120, 100]
    let p3 = [Self.d65.0, Self.d65.1] + Self.p3Primaries.flatMap { [$0.0, $0.1] }
    let png = try Self.flatPNG(colour, chunks: [Self.gAMA(45_455), Self.cHRM(p3)])
    let wanted = Self.expected(colour, primaries: Self.p3Primaries, gamma: 2.2)
    Self.expectClose(try Self.drawnColour(png, name: "chrm.png"), wanted, "cHRM PNG \(colour)")
  }

  @Test func greyJPEGWithAGreyProfileIsDrawnInSRGB() throws {
    let jpeg = Self.withProfile(try Self.flatJPEG([128]), try Self.greyProfile(gamma: 1))
    Self.expectClose(try Self.drawnColour(jpeg, name: "grey.jpg"), (188, 188, 188), "linear grey JPEG")
  }

  /// A CMYK printer profile (made with LittleCMS) whose A2B0 table maps full magenta and yellow
  /// ink (and only that) to a mid grey, L* 50, and every other corner of the ink cube to white.
  static func cmykProfile() throws -> [UInt8] {
    let profile = try #require(cmsCreateProfilePlaceholder(nil))
    defer { cmsCloseProfile(profile) }
    cmsSetProfileVersion(profile, 4.3)
    cmsSetDeviceClass(profile, cmsSigOutputClass)
    cmsSetColorSpace(profile, cmsSigCmykData)
    cmsSetPCS(profile, cmsSigLabData)
    // 2 grid points a side, C slowest: node c*8 + m*4 + y*2 + k, each L* a* b* in 16 bits.
    var table = [UInt16](repeating: 0, count: 16 * 3)
    for node in 0..<16 {
      table[node * 3] = node == 6 ? 32_768 : 65_535
      table[node * 3 + 1] = 128 * 257
      table[node * 3 + 2] = 128 * 257
    }
    let pipeline = try #require(cmsPipelineAlloc(nil, 4, 3))
    defer { cmsPipelineFree(pipeline) }
    // A lutAtoBType holds A curves, the table and B curves (identity curves here).
    let clut = try #require(cmsStageAllocCLut16bit(nil, 2, 4, 3, table))
    #expect(cmsPipelineInsertStage(pipeline, cmsAT_END, try #require(cmsStageAllocToneCurves(nil, 4, nil))) != 0)
    #expect(cmsPipelineInsertStage(pipeline, cmsAT_END, clut) != 0)
    #expect(cmsPipelineInsertStage(pipeline, cmsAT_END, try #require(cmsStageAllocToneCurves(nil, 3, nil))) != 0)
    #expect(cmsWriteTag(profile, cmsSigAToB0Tag, UnsafeRawPointer(pipeline)) != 0)
    #expect(cmsWriteTag(profile, cmsSigMediaWhitePointTag, cmsD50_XYZ()) != 0)
    return try save(profile)
  }

  /// Adobe's inverted CMYK (as turbojpeg writes it, with an APP14 marker) through a CMYK profile:
  /// stored (255, 0, 0, 255) is no cyan, full magenta and yellow, no black, which the profile
  /// says is L* 50 grey, sRGB (119, 119, 119). Without the profile it is drawn red.
  @Test func cmykJPEGWithACMYKProfileIsDrawnInSRGB() throws {
    let cmyk = try PictureFixtures.jpeg(
      width: 64, height: 64, channels: 4, pixels: [UInt8]([255, 0, 0, 255]).repeated(64 * 64))
    let jpeg = Self.withProfile(cmyk, try Self.cmykProfile())
    Self.expectClose(try Self.drawnColour(jpeg, name: "cmyk.jpg"), (119, 119, 119), "CMYK through its profile")
    // An RGB profile on a CMYK photo does not fit it: the usual conversion, red.
    let mismatched = Self.withProfile(cmyk, try Self.rgbProfile(primaries: Self.p3Primaries))
    let red = try Self.drawnColour(mismatched, name: "cmyk-rgb-profile.jpg")
    #expect(red.r > 245 && red.g < 10 && red.b < 10, "\(red)")
  }

  // MARK: Drawn as they are

  /// Files that say sRGB, one way or another, and profiles that cannot be used: the photo is
  /// drawn as sRGB, as before (and nothing crashes).
  static let asSRGB: [(String, @Sendable () throws -> [UInt8])] = [
    ("srgb-profile.jpg", { withProfile(try flatJPEG([200, 60, 40]), try rgbProfile(primaries: sRGBPrimaries)) }),
    ("srgb-chunk-beats-gama.png", { try flatPNG([200, 60, 40], chunks: [("sRGB", [0]), gAMA(100_000)]) }),
    (
      "gama-and-chrm-of-srgb.png",
      {
        try flatPNG(
          [200, 60, 40], chunks: [gAMA(45_455), cHRM([0.3127, 0.3290, 0.64, 0.33, 0.30, 0.60, 0.15, 0.06])])
      }
    ),
    (
      "truncated-profile.jpg",
      { withProfile(try flatJPEG([200, 60, 40]), Array(try rgbProfile(primaries: p3Primaries).prefix(200))) }
    ),
    (
      "scrambled-tag-table.jpg",
      {
        var profile = try rgbProfile(primaries: p3Primaries)
        for index in 132..<min(profile.count, 240) { profile[index] ^= 0xA5 }
        return withProfile(try flatJPEG([200, 60, 40]), profile)
      }
    ),
    ("noise-profile.jpg", { withProfile(try flatJPEG([200, 60, 40]), PictureFixtures.noise(count: 3000, seed: 3)) }),
    ("grey-profile-on-rgb.jpg", { withProfile(try flatJPEG([200, 60, 40]), try greyProfile(gamma: 1)) }),
    (
      "one-segment-of-two.jpg",
      {
        let profile = try rgbProfile(primaries: p3Primaries)
        return withProfile(try flatJPEG([200, 60, 40]), profile, segmentBytes: profile.count / 2 + 1, order: [1])
      }
    ),
    (
      "segment-numbered-twice.jpg",
      {
        let profile = try rgbProfile(primaries: p3Primaries)
        return withProfile(try flatJPEG([200, 60, 40]), profile, segmentBytes: profile.count / 2 + 1, order: [1, 1])
      }
    ),
    (
      // A valid profile (LittleCMS reads the size from the header) over the 4 MiB bound.
      "profile-over-4-mib.jpg",
      {
        let profile = try rgbProfile(primaries: p3Primaries) + [UInt8](repeating: 0, count: 4 << 20)
        return withProfile(try flatJPEG([200, 60, 40]), profile)
      }
    ),
    (
      "damaged-iccp.png",
      {
        var chunk = try iCCP(try rgbProfile(primaries: p3Primaries))
        chunk.1[chunk.1.count / 2] ^= 0xFF
        return try flatPNG([200, 60, 40], chunks: [chunk])
      }
    ),
    ("absurd-gama.png", { try flatPNG([200, 60, 40], chunks: [gAMA(1)]) }),
    (
      "degenerate-chrm.png",
      { try flatPNG([200, 60, 40], chunks: [gAMA(100_000), cHRM([Double](repeating: 0.3, count: 8))]) }
    ),
  ]

  @Test(arguments: asSRGB.map(\.0))
  func photoIsDrawnAsItIs(name: String) throws {
    let bytes = try Self.asSRGB.first { $0.0 == name }!.1()
    Self.expectClose(try Self.drawnColour(bytes, name: name), (200, 60, 40), name)
  }
}
