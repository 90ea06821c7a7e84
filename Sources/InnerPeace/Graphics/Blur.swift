internal import CInnerPeaceKernels

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
    var b = [UInt8](unsafeUninitializedCapacity: mask.count) { _, count in count = mask.count }
    for radius in radii {
      boxVertical(a, into: &b, width: width, height: height, radius: radius)
      swap(&a, &b)
    }
    var t = transpose(a, width: width, height: height)
    var u = [UInt8](unsafeUninitializedCapacity: t.count) { _, count in count = t.count }
    for radius in radii {
      boxVertical(t, into: &u, width: height, height: width, radius: radius)
      swap(&t, &u)
    }
    return transpose(t, width: height, height: width)
  }

  /// One vertical box pass of `2 * radius + 1` rows (outside the mask counts as zero).
  static func boxVertical(_ source: [UInt8], into target: inout [UInt8], width: Int, height: Int, radius: Int) {
    var sums = [UInt16](repeating: 0, count: width)
    source.withUnsafeBufferPointer { src in
      target.withUnsafeMutableBufferPointer { dst in
        sums.withUnsafeMutableBufferPointer { scratch in
          innerpeace_box_vertical(
            src.baseAddress, dst.baseAddress, scratch.baseAddress, Int32(width), Int32(height), Int32(radius))
        }
      }
    }
  }

  /// The `height` x `width` transpose of a `width` x `height` mask.
  static func transpose(_ source: [UInt8], width: Int, height: Int) -> [UInt8] {
    [UInt8](unsafeUninitializedCapacity: source.count) { target, count in
      source.withUnsafeBufferPointer {
        innerpeace_transpose($0.baseAddress, target.baseAddress, Int32(width), Int32(height))
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
      mask.withUnsafeBufferPointer { innerpeace_halve($0.baseAddress, target.baseAddress, Int32(width), Int32(height)) }
      count = halfWidth * halfHeight
    }
    return (result, halfWidth, halfHeight)
  }

  /// Bilinear 2x upscale of a half-size mask back to `width` x `height` (pixel centres aligned).
  static func double(_ small: [UInt8], width smallWidth: Int, height smallHeight: Int, toWidth width: Int, height: Int)
    -> [UInt8]
  {
    [UInt8](unsafeUninitializedCapacity: width * height) { target, count in
      small.withUnsafeBufferPointer {
        innerpeace_double(
          $0.baseAddress, Int32(smallWidth), Int32(smallHeight), target.baseAddress, Int32(width), Int32(height))
      }
      count = width * height
    }
  }

  /// Stacks shadow layers as Cairo would paint them one over another:
  /// `1 - (1 - a1)(1 - a2)...`, in 8-bit.
  static func stack(_ layers: [[UInt8]]) -> [UInt8] {
    guard var result = layers.first else { return [] }
    for layer in layers.dropFirst() {
      result.withUnsafeMutableBufferPointer { accumulated in
        layer.withUnsafeBufferPointer { innerpeace_stack(accumulated.baseAddress, $0.baseAddress, $0.count) }
      }
    }
    return result
  }
}
