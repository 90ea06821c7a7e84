import Testing

@testable import InnerPeace

/// The halo's transpose and 2x upscale, vectorised where SSE2 is, against the plain rule
/// written out here, on sizes around the 16-pixel blocks and their edges.
@Suite struct BlurKernelTests {
  static let sizes: [(Int, Int)] = [
    (1, 1), (1, 17), (17, 1), (2, 3), (15, 15), (16, 16), (17, 16), (16, 17), (31, 33), (32, 32), (33, 47), (48, 16),
    (100, 37), (257, 130), (1200, 630),
  ]

  /// Bytes from a fixed linear congruential sequence, so the test is the same every run.
  static func mask(_ count: Int, seed: UInt32) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
      state = state &* 1_664_525 &+ 1_013_904_223
      return UInt8(truncatingIfNeeded: state >> 24)
    }
  }

  @Test func transposeMatchesThePlainRule() {
    for (width, height) in Self.sizes {
      let source = Self.mask(width * height, seed: UInt32(width * 7919 + height))
      var target = [UInt8](repeating: 0, count: source.count)
      Blur.transpose(source, into: &target, width: width, height: height)
      var expected = [UInt8](repeating: 0, count: source.count)
      for y in 0..<height { for x in 0..<width { expected[x * height + y] = source[y * width + x] } }
      // A Bool, and the first difference: swift-testing's diff of two large arrays takes minutes.
      let first = target.indices.first { target[$0] != expected[$0] }
      #expect(first == nil, "\(width) x \(height): first difference at \(first ?? -1)")
    }
  }

  @Test func doubleMatchesThePlainRule() {
    for (width, height) in Self.sizes {
      let smallWidth = (width + 1) / 2
      let smallHeight = (height + 1) / 2
      let small = Self.mask(smallWidth * smallHeight, seed: UInt32(width * 31 + height))
      var target = [UInt8](repeating: 0, count: width * height)
      Blur.double(small, width: smallWidth, height: smallHeight, into: &target, toWidth: width, height: height)
      var expected = [UInt8](repeating: 0, count: width * height)
      // Each pixel weighs its four half-size neighbours by quarters on each axis.
      func neighbours(_ at: Int, _ limit: Int) -> (Int, Int, Int) {
        let first = max(0, (at - 1) >> 1)
        let second = min(limit - 1, (at + 1) >> 1)
        return (first, second, first == second ? 0 : (at & 1 == 1 ? 1 : 3))
      }
      for y in 0..<height {
        let (y0, y1, wy) = neighbours(y, smallHeight)
        for x in 0..<width {
          let (x0, x1, wx) = neighbours(x, smallWidth)
          func at(_ row: Int, _ column: Int) -> Int { Int(small[row * smallWidth + column]) }
          let top = at(y0, x0) * (4 - wx) + at(y0, x1) * wx
          let bottom = at(y1, x0) * (4 - wx) + at(y1, x1) * wx
          expected[y * width + x] = UInt8((top * (4 - wy) + bottom * wy + 8) >> 4)
        }
      }
      // A Bool, and the first difference: swift-testing's diff of two large arrays takes minutes.
      let first = target.indices.first { target[$0] != expected[$0] }
      #expect(first == nil, "\(width) x \(height): first difference at \(first ?? -1)")
    }
  }
}
