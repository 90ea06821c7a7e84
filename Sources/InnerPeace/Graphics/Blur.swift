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
    var result = mask
    var scratch = [UInt8]()
    gaussian(&result, scratch: &scratch, width: width, height: height, sigma: sigma)
    return result
  }

  /// Blurs `mask` in place, with `scratch` as working space (resized to the mask's size if it is
  /// not already): two buffers of the mask's size in all, whatever the number of passes.
  static func gaussian(_ mask: inout [UInt8], scratch: inout [UInt8], width: Int, height: Int, sigma: Double) {
    let radii = boxRadii(sigma: sigma).filter { $0 > 0 }
    guard !radii.isEmpty, width > 0, height > 0 else { return }
    if scratch.count != mask.count {
      scratch = [UInt8](unsafeUninitializedCapacity: mask.count) { _, count in count = mask.count }
    }
    for radius in radii {
      boxVertical(mask, into: &scratch, width: width, height: height, radius: radius)
      swap(&mask, &scratch)
    }
    transpose(mask, into: &scratch, width: width, height: height)
    swap(&mask, &scratch)
    for radius in radii {
      boxVertical(mask, into: &scratch, width: height, height: width, radius: radius)
      swap(&mask, &scratch)
    }
    transpose(mask, into: &scratch, width: height, height: width)
    swap(&mask, &scratch)
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

  /// Writes the `height` x `width` transpose of a `width` x `height` mask into `target` (same size).
  static func transpose(_ source: [UInt8], into target: inout [UInt8], width: Int, height: Int) {
    source.withUnsafeBufferPointer { source in
      target.withUnsafeMutableBufferPointer {
        innerpeace_transpose(source.baseAddress, $0.baseAddress, Int32(width), Int32(height))
      }
    }
  }

  /// The stacked shadow of `sigmas` over `mask`: each layer is the mask blurred by one sigma, and
  /// the layers stack as Cairo would paint them. The first (sharpest) layer is blurred at full
  /// resolution; the wider ones at half resolution, where they lose nothing visible, and the
  /// stack of those is scaled back up once. That takes about a third of the work.
  ///
  /// Takes the mask by value and blurs it in place: with the half-size work, the whole stack
  /// needs about two and a half buffers of the mask's size.
  static func shadow(of mask: consuming [UInt8], width: Int, height: Int, sigmas: [Double]) -> [UInt8] {
    guard let first = sigmas.first else { return [UInt8](repeating: 0, count: mask.count) }
    var sharp = consume mask
    var scratch = [UInt8]()
    let wide = Array(sigmas.dropFirst())
    guard !wide.isEmpty, width >= 8, height >= 8 else {
      let layers = wide.map { gaussian(sharp, width: width, height: height, sigma: $0) }
      gaussian(&sharp, scratch: &scratch, width: width, height: height, sigma: first)
      return stack([sharp] + layers)
    }
    let (small, smallWidth, smallHeight) = halve(sharp, width: width, height: height)
    gaussian(&sharp, scratch: &scratch, width: width, height: height, sigma: first)
    let smallLayers = wide.map { gaussian(small, width: smallWidth, height: smallHeight, sigma: $0 / 2) }
    let smallStack = stack(smallLayers)
    if scratch.count != sharp.count {
      scratch = [UInt8](unsafeUninitializedCapacity: sharp.count) { _, count in count = sharp.count }
    }
    double(smallStack, width: smallWidth, height: smallHeight, into: &scratch, toWidth: width, height: height)
    sharp.withUnsafeMutableBufferPointer { accumulated in
      scratch.withUnsafeBufferPointer { innerpeace_stack(accumulated.baseAddress, $0.baseAddress, $0.count) }
    }
    return sharp
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

  /// Bilinear 2x upscale of a half-size mask back to `width` x `height` (pixel centres aligned),
  /// written into `target` (`width * height` bytes).
  static func double(
    _ small: [UInt8], width smallWidth: Int, height smallHeight: Int, into target: inout [UInt8], toWidth width: Int,
    height: Int
  ) {
    var blend = [UInt16](repeating: 0, count: smallWidth)
    small.withUnsafeBufferPointer { source in
      target.withUnsafeMutableBufferPointer { target in
        blend.withUnsafeMutableBufferPointer {
          innerpeace_double(
            source.baseAddress, Int32(smallWidth), Int32(smallHeight), target.baseAddress, Int32(width), Int32(height),
            $0.baseAddress)
        }
      }
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

  /// `target[i] = max(target[i], source[i])` for `i < count`: byte maxima, a vectorised C kernel
  /// (the halo's contrast check grows the text's coverage with it).
  @inline(__always)
  static func maximum(into target: UnsafeMutablePointer<UInt8>, _ source: UnsafePointer<UInt8>, count: Int) {
    innerpeace_max_bytes(target, source, count)
  }
}
