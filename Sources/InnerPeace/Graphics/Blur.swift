/// A separable Gaussian blur for 8-bit alpha masks, approximated by three box blurs per axis.
///
/// Each box pass keeps a running sum per column and walks the rows once, so its cost is the same
/// whatever the radius: a pass reads each pixel twice and writes it once. Horizontal passes run
/// as vertical passes over a transposed copy, so every inner loop walks memory in order and the
/// compiler can vectorise it.
enum Blur {
  /// Box sizes (odd) whose three successive passes approximate a Gaussian of `sigma`
  /// (W. M. Wells, "Efficient synthesis of Gaussian filters by cascaded uniform filters", 1986).
  static func boxRadii(sigma: Double, passes: Int = 3) -> [Int] {
    guard sigma > 0 else { return [] }
    let n = Double(passes)
    let ideal = (12 * sigma * sigma / n + 1).squareRoot()
    var lower = Int(ideal.rounded(.down))
    if lower % 2 == 0 { lower -= 1 }
    lower = max(lower, 1)
    let upper = lower + 2
    let wl = Double(lower)
    let m = ((12 * sigma * sigma - n * wl * wl - 4 * n * wl - 3 * n) / (-4 * wl - 4)).rounded()
    return (0..<passes).map { Double($0) < m ? (lower - 1) / 2 : (upper - 1) / 2 }
  }

  /// Blurs a `width` x `height` mask (rows packed) with a Gaussian of `sigma` pixels.
  /// Outside the mask counts as zero.
  static func gaussian(_ mask: [UInt8], width: Int, height: Int, sigma: Double) -> [UInt8] {
    let radii = boxRadii(sigma: sigma).filter { $0 > 0 }
    guard !radii.isEmpty, width > 0, height > 0 else { return mask }
    var a = mask
    var b = [UInt8](repeating: 0, count: mask.count)
    for radius in radii {
      boxVertical(a, into: &b, width: width, height: height, radius: radius)
      swap(&a, &b)
    }
    var t = transpose(a, width: width, height: height)
    var u = [UInt8](repeating: 0, count: t.count)
    for radius in radii {
      boxVertical(t, into: &u, width: height, height: width, radius: radius)
      swap(&t, &u)
    }
    return transpose(t, width: height, height: width)
  }

  /// One vertical box pass of `2 * radius + 1` rows.
  static func boxVertical(_ source: [UInt8], into target: inout [UInt8], width: Int, height: Int, radius: Int) {
    let span = 2 * radius + 1
    // Fixed point: (sum * scale) >> 24 == round(sum / span).
    let scale = Int32((1 << 24) / span)
    let half = Int32(1 << 23)
    var sums = [Int32](repeating: 0, count: width)
    source.withUnsafeBufferPointer { src in
      target.withUnsafeMutableBufferPointer { dst in
        sums.withUnsafeMutableBufferPointer { acc in
          let s = src.baseAddress!
          let d = dst.baseAddress!
          let sum = acc.baseAddress!
          // Prime the window with rows 0...radius-1 (rows above the mask are zero).
          for row in 0..<min(radius, height) {
            let line = s + row * width
            for x in 0..<width { sum[x] &+= Int32(line[x]) }
          }
          for y in 0..<height {
            let entering = y + radius
            if entering < height {
              let line = s + entering * width
              for x in 0..<width { sum[x] &+= Int32(line[x]) }
            }
            let out = d + y * width
            for x in 0..<width { out[x] = UInt8(truncatingIfNeeded: (sum[x] &* scale &+ half) >> 24) }
            let leaving = y - radius
            if leaving >= 0 {
              let line = s + leaving * width
              for x in 0..<width { sum[x] &-= Int32(line[x]) }
            }
          }
        }
      }
    }
  }

  /// The `height` x `width` transpose of a `width` x `height` mask, in cache-sized tiles.
  static func transpose(_ source: [UInt8], width: Int, height: Int) -> [UInt8] {
    let tile = 32
    return [UInt8](unsafeUninitializedCapacity: source.count) { target, count in
      source.withUnsafeBufferPointer { src in
        let s = src.baseAddress!
        let d = target.baseAddress!
        var y0 = 0
        while y0 < height {
          let y1 = min(y0 + tile, height)
          var x0 = 0
          while x0 < width {
            let x1 = min(x0 + tile, width)
            for y in y0..<y1 {
              for x in x0..<x1 { d[x * height + y] = s[y * width + x] }
            }
            x0 = x1
          }
          y0 = y1
        }
      }
      count = source.count
    }
  }

  /// The stacked shadow of `sigmas` over `mask`: each layer is the mask blurred by one sigma, and
  /// the layers stack as Cairo would paint them. The first (sharpest) layer is blurred at full
  /// resolution; the wider ones at half resolution, where they lose nothing visible, and the
  /// stack of those is scaled back up once. That takes about a third of the work.
  static func shadow(of mask: [UInt8], width: Int, height: Int, sigmas: [Double]) -> [UInt8] {
    guard let first = sigmas.first else { return [UInt8](repeating: 0, count: mask.count) }
    let sharp = gaussian(mask, width: width, height: height, sigma: first)
    let wide = Array(sigmas.dropFirst())
    guard !wide.isEmpty, width >= 8, height >= 8 else {
      return stack([sharp] + wide.map { gaussian(mask, width: width, height: height, sigma: $0) })
    }
    let (small, smallWidth, smallHeight) = halve(mask, width: width, height: height)
    let smallLayers = wide.map { gaussian(small, width: smallWidth, height: smallHeight, sigma: $0 / 2) }
    let smallStack = stack(smallLayers)
    let wideStack = double(smallStack, width: smallWidth, height: smallHeight, toWidth: width, height: height)
    return stack([sharp, wideStack])
  }

  /// 2 x 2 box downscale (odd edges repeat the last row or column).
  static func halve(_ mask: [UInt8], width: Int, height: Int) -> ([UInt8], Int, Int) {
    let halfWidth = (width + 1) / 2
    let halfHeight = (height + 1) / 2
    let result = [UInt8](unsafeUninitializedCapacity: halfWidth * halfHeight) { target, count in
      mask.withUnsafeBufferPointer { source in
        let s = source.baseAddress!
        for y in 0..<halfHeight {
          let row0 = s + (2 * y) * width
          let row1 = s + min(2 * y + 1, height - 1) * width
          let out = target.baseAddress! + y * halfWidth
          for x in 0..<halfWidth {
            let x0 = 2 * x
            let x1 = min(2 * x + 1, width - 1)
            out[x] = UInt8((Int(row0[x0]) + Int(row0[x1]) + Int(row1[x0]) + Int(row1[x1]) + 2) >> 2)
          }
        }
      }
      count = halfWidth * halfHeight
    }
    return (result, halfWidth, halfHeight)
  }

  /// Bilinear 2x upscale of a half-size mask back to `width` x `height` (pixel centres aligned).
  static func double(_ small: [UInt8], width smallWidth: Int, height smallHeight: Int, toWidth width: Int, height: Int)
    -> [UInt8]
  {
    [UInt8](unsafeUninitializedCapacity: width * height) { target, count in
      small.withUnsafeBufferPointer { source in
        let s = source.baseAddress!
        for y in 0..<height {
          // Full-res pixel centre y + 0.5 sits at small coordinate (y + 0.5) / 2 - 0.5.
          let sy0 = max(0, (y - 1) >> 1)
          let sy1 = min(smallHeight - 1, (y + 1) >> 1)
          let wy1: Int32 = sy0 == sy1 ? 0 : (y & 1 == 1 ? 1 : 3)  // quarter weights
          let r0 = s + sy0 * smallWidth
          let r1 = s + sy1 * smallWidth
          let out = target.baseAddress! + y * width
          for x in 0..<width {
            let sx0 = max(0, (x - 1) >> 1)
            let sx1 = min(smallWidth - 1, (x + 1) >> 1)
            let wx1: Int32 = sx0 == sx1 ? 0 : (x & 1 == 1 ? 1 : 3)
            let top = Int32(r0[sx0]) * (4 - wx1) + Int32(r0[sx1]) * wx1
            let bottom = Int32(r1[sx0]) * (4 - wx1) + Int32(r1[sx1]) * wx1
            out[x] = UInt8((top * (4 - wy1) + bottom * wy1 + 8) >> 4)
          }
        }
      }
      count = width * height
    }
  }

  /// Stacks shadow layers as Cairo would paint them one over another:
  /// `1 - (1 - a1)(1 - a2)...`, in 8-bit.
  static func stack(_ layers: [[UInt8]]) -> [UInt8] {
    guard var result = layers.first else { return [] }
    for layer in layers.dropFirst() {
      result.withUnsafeMutableBufferPointer { r in
        layer.withUnsafeBufferPointer { l in
          for i in 0..<r.count {
            let under = 255 - Int32(r[i])
            let over = 255 - Int32(l[i])
            let product = under * over
            r[i] = UInt8(255 - ((product + 128 + ((product + 128) >> 8)) >> 8))
          }
        }
      }
    }
    return result
  }
}
