import Foundation

/// How much the halo is deepened over a bright photo, close to the glyphs only (see
/// ``HaloContrast/proximity(_:width:height:)``): the shadow stacked more times, and, where that
/// alone is not enough, a light shade that hugs the letters.
struct HaloStrength: Equatable, Sendable {
  /// How many times the shadow mask is stacked over itself next to the glyphs,
  /// `1 - (1 - alpha)^gain` (at least 1: the plain halo; fractions allowed), fading back to the
  /// plain halo a few pixels away from them. Like adding passes, it never turns the glow into a
  /// hard edge.
  var gain: Double = 1
  /// The opacity of the black shade next to the glyphs (fading with the same proximity), from 0
  /// up to ``HaloContrast/maximumScrim``. There is no shade where there are no letters: no box
  /// shows on a bright photo.
  var scrim: Double = 0

  static let plain = HaloStrength()
}

/// What the halo stage saw and chose, for tests and tools: the text image's rectangle on the
/// canvas, the text's coverage there (rows packed), the first row of the author line (if any),
/// the strength chosen for the quote and the author line, and the photo under the text image
/// before the halo and the text were drawn.
struct HaloProbe: Sendable {
  var left: Int
  var top: Int
  var width: Int
  var height: Int
  var coverage: [UInt8]
  var authorRow: Int?
  var quoteStrength: HaloStrength
  var authorStrength: HaloStrength
  /// The canvas's pixels under the text image (BGRX, 4 bytes a pixel, rows packed), before the
  /// halo and the text are drawn.
  var background: [UInt8] = []

  /// The canvas's pixels in a rectangle (BGRX, rows packed); the canvas must be flushed.
  static func copy(_ canvas: ImageSurface, left: Int, top: Int, width: Int, height: Int) -> [UInt8] {
    var pixels = [UInt8](repeating: 0, count: 4 * width * height)
    for y in 0..<height {
      let row = canvas.data + (top + y) * canvas.stride + 4 * left
      for x in 0..<(4 * width) { pixels[4 * width * y + x] = row[x] }
    }
    return pixels
  }
}

/// Keeps white text readable on any photo: finds the least deepening of the halo that gives the
/// pixels just outside the glyphs at least ``target`` contrast against white (WCAG), for
/// ``quantile`` of them, judged on the photo under the block before the text is drawn. On a dark
/// photo that is no deepening at all: the halo stays the app's soft glow.
///
/// "Just outside the glyphs" is the ring of pixels no glyph covers but one within
/// ``ringRadius`` pixels (in x and y) does. The quote and the author line are judged apart, each
/// with its own gain; the gain changes smoothly from one to the other.
enum HaloContrast {
  /// The contrast aimed for: the promise is 4.5:1, and the model below is an estimate.
  static let target = 5.0
  /// The ring's reach outside the glyphs, in pixels.
  static let ringRadius = 3
  /// The most passes: past them the glow would read as a black outline.
  static let maximumGain = 5.0
  /// The darkest shade next to the glyphs: 60 % black.
  static let maximumScrim = 0.6
  /// How far the deepening reaches past the glyphs at full strength: the ring and a pixel more.
  /// It then fades over about three times ``proximitySigma`` (about 7 px from the ink in all),
  /// well inside the text image's margin, so it shows no edge.
  static let proximityRadius = ringRadius + 1
  /// The blur that fades the deepening out past ``proximityRadius``, in pixels.
  static let proximitySigma = 0.8
  /// A lower bound of the proximity of every ring pixel (about 0.94 at a ring corner, 3 px from
  /// the ink in x and y; rounded down).
  static let ringProximity = 0.85

  /// A strength found for full proximity, made to hold at the ring's least proximity
  /// (``ringProximity``): every ring pixel then gets at least the passes and the shade it was
  /// found to need.
  static func scaled(_ strength: HaloStrength) -> HaloStrength {
    guard strength != .plain else { return strength }
    return HaloStrength(
      gain: 1 + (strength.gain - 1) / ringProximity, scrim: min(1, strength.scrim / ringProximity))
  }
  /// The share of ring pixels that must reach the target.
  static let quantile = 0.95

  /// Linear light of each sRGB byte value.
  static let linear: [Double] = (0..<256).map { value in
    let c = Double(value) / 255
    return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
  }

  /// `L^(1/2.2)` for luminance `L` in 4096 steps: the factor by which sRGB values must shrink to
  /// bring a pixel's luminance to a target is about `(target / L)^(1/2.2)`.
  private static let root: [Double] = (0...4096).map { pow(Double($0) / 4096, 1 / 2.2) }

  /// `log(root[i])`, so a pixel's needed passes cost no logarithm at render time.
  private static let logRoot: [Double] = root.map { log(max($0, .leastNormalMagnitude)) }

  /// `log(1 - alpha)` for each 8-bit alpha (minus infinity at 255).
  private static let logClear: [Double] = (0..<256).map { log(1 - Double($0) / 255) }

  /// WCAG relative luminance of an sRGB pixel.
  static func luminance(red: UInt8, green: UInt8, blue: UInt8) -> Double {
    0.2126 * linear[Int(red)] + 0.7152 * linear[Int(green)] + 0.0722 * linear[Int(blue)]
  }

  /// WCAG contrast of white against luminance `L`.
  static func contrastWithWhite(_ luminance: Double) -> Double { 1.05 / (luminance + 0.05) }

  /// Marks the ring of a `width` x `height` coverage (rows packed): uncovered pixels with a
  /// covered one within ``ringRadius`` in x and in y.
  static func ring(_ coverage: [UInt8], width: Int, height: Int) -> [Bool] {
    let radius = ringRadius
    // First grow the coverage sideways, then look up and down in the grown rows.
    let across = grownAcross(coverage, width: width, height: height)
    // Then up and down, row by row: the last grown row seen in each column, going down and
    // going up.
    var result = [Bool](repeating: false, count: coverage.count)
    var last = [Int](repeating: -radius - 1, count: width)
    across.withUnsafeBufferPointer { across in
      coverage.withUnsafeBufferPointer { source in
        result.withUnsafeMutableBufferPointer { result in
          last.withUnsafeMutableBufferPointer { last in
            for y in 0..<height {
              let row = y * width
              for x in 0..<width {
                if across[row + x] > 0 { last[x] = y }
                result[row + x] = y - last[x] <= radius && source[row + x] == 0
              }
            }
            for x in 0..<width { last[x] = height + radius + 1 }
            for y in stride(from: height - 1, through: 0, by: -1) {
              let row = y * width
              for x in 0..<width {
                if across[row + x] > 0 { last[x] = y }
                if last[x] - y <= radius && source[row + x] == 0 { result[row + x] = true }
              }
            }
          }
        }
      }
    }
    return result
  }

  /// Nonzero where a covered pixel lies within ``ringRadius`` in the same row, else 0: the row's
  /// largest coverage within that reach (byte maxima over shifted rows, a vectorised C kernel).
  static func grownAcross(_ coverage: [UInt8], width: Int, height: Int, radius: Int = ringRadius) -> [UInt8] {
    var across = coverage
    coverage.withUnsafeBufferPointer { source in
      across.withUnsafeMutableBufferPointer { target in
        guard let source = source.baseAddress, let target = target.baseAddress else { return }
        for y in 0..<height {
          let row = source + y * width
          let out = target + y * width
          for shift in 1...radius where shift < width {
            Blur.maximum(into: out, row + shift, count: width - shift)
            Blur.maximum(into: out + shift, row, count: width - shift)
          }
        }
      }
    }
    return across
  }

  /// The strengths that bring the ring to the target over this background, for the quote (rows
  /// above `authorRow`) and the author line (rows from it).
  /// - Parameters:
  ///   - coverage: the text's coverage in the text image, rows packed.
  ///   - shadow: the plain stacked shadow mask of the same image.
  ///   - background: the canvas's pixels (BGRX) at the text image's top-left corner.
  ///   - stride: bytes per canvas row.
  ///   - quoteSize: the quote's size in pixels: from 48 px its lines are sampled.
  ///   - proximity: how close each pixel is to the glyphs (``proximity(_:width:height:)``), which
  ///     scales the deepening there; `nil` deepens every pixel fully.
  static func strengths(
    coverage: [UInt8], shadow: [UInt8], width: Int, height: Int, background: UnsafePointer<UInt8>, stride: Int,
    authorRow: Int?, quoteSize: Int, proximity: [UInt8]? = nil
  ) -> (quote: HaloStrength, author: HaloStrength) {
    let quoteStep = quoteSize >= 48 ? 2 : 1
    // Large letters are judged on every other pixel of every other row (a quarter of the work,
    // the same quantile); small ones, and the author line, on every pixel.
    let across = grownAcross(coverage, width: width, height: height)
    let radius = ringRadius
    let targetRoot = pow(1.05 / target - 0.05, 1 / 2.2)
    // For each ring pixel short of the target: the factor its colour must shrink by, and its shadow.
    var needs: [[Need]] = [[], []]
    let logTargetRoot = log(targetRoot)
    var counts = [0, 0]
    linear.withUnsafeBufferPointer { linear in
      root.withUnsafeBufferPointer { root in
        across.withUnsafeBufferPointer { across in
          coverage.withUnsafeBufferPointer { source in
            // The rows within reach of row y, folded into one (byte maxima, vectorised).
            var near = [UInt8](repeating: 0, count: width)
            var y = 0
            while y < height {
              let line = authorRow.map { y >= $0 ? 1 : 0 } ?? 0
              let step = line == 0 ? quoteStep : 1
              defer { y += step }
              let pixels = background + y * stride
              let (low, high) = (max(0, y - radius), min(height - 1, y + radius))
              near.withUnsafeMutableBufferPointer { near in
                guard let near = near.baseAddress, let rows = across.baseAddress else { return }
                near.update(from: rows + low * width, count: width)
                for other in (low + 1)..<(high + 1) { Blur.maximum(into: near, rows + other * width, count: width) }
              }
              for x in Swift.stride(from: 0, to: width, by: step) where source[y * width + x] == 0 && near[x] != 0 {
                counts[line] += 1
                let pixel = pixels + 4 * x
                let luminance =
                  0.2126 * linear[Int(pixel[2])] + 0.7152 * linear[Int(pixel[1])] + 0.0722 * linear[Int(pixel[0])]
                let index = min(4096, Int(luminance * 4096))
                let factor = targetRoot / root[index]
                guard factor < 1 else { continue }
                needs[line].append(
                  (
                    factor, Double(shadow[y * width + x]) / 255, logTargetRoot - logRoot[index],
                    proximity.map { Double($0[y * width + x]) / 255 } ?? 1
                  ))
              }
            }
          }
        }
      }
    }
    return (strength(needs[0], ringCount: counts[0]), strength(needs[1], ringCount: counts[1]))
  }

  /// The least strength that brings all but `1 - quantile` of `ringCount` pixels to the target,
  /// `needs` being the pixels short of it. The quantiles are read from histograms (steps of
  /// 1/100 in gain, 1/1000 in scrim, rounded up): linear time, however many pixels.
  /// A ring pixel short of the target: the factor its colour must shrink by (and its logarithm),
  /// the plain shadow's alpha there, and its proximity to the glyphs (0...1).
  typealias Need = (factor: Double, shadow: Double, logFactor: Double, proximity: Double)

  private static func strength(_ needs: [Need], ringCount: Int) -> HaloStrength {
    // How many pixels may stay short of the target.
    let allowed = Int((Double(ringCount) * (1 - quantile)).rounded(.down))
    guard needs.count > allowed else { return .plain }
    // The passes each pixel needs: (1 - alpha)^exponent must come down to its factor, where the
    // exponent is 1 + (gain - 1) x proximity.
    let gainSteps = Int(maximumGain * 100)
    let gainBucket = upperQuantile(of: needs, buckets: gainSteps + 1, allowed: allowed) { need in
      let shadow = Int((need.shadow * 255).rounded())
      guard shadow > 0, need.proximity > 0 else { return gainSteps }
      guard shadow < 255 else { return 0 }
      let exponent = need.logFactor / logClear[shadow]
      return min(gainSteps, max(0, Int(((1 + (exponent - 1) / need.proximity) * 100).rounded(.up))))
    }
    if gainBucket < gainSteps { return HaloStrength(gain: max(1, Double(gainBucket) / 100), scrim: 0) }
    // The gain alone is not enough: the shade takes what is left.
    let scrimBucket = upperQuantile(of: needs, buckets: 1001, allowed: allowed) { need in
      guard need.proximity > 0 else { return 1000 }
      let alpha = 1 - pow(1 - need.shadow, 1 + (maximumGain - 1) * need.proximity)
      let shade = max(0, 1 - need.factor / (1 - alpha)) / need.proximity
      return alpha >= 1 ? 0 : min(1000, Int((shade * 1000).rounded(.up)))
    }
    return HaloStrength(gain: maximumGain, scrim: min(maximumScrim, Double(scrimBucket) / 1000))
  }

  /// The smallest bucket such that at most `allowed` of `needs` fall above it.
  private static func upperQuantile(
    of needs: [Need], buckets: Int, allowed: Int,
    bucket: (Need) -> Int
  ) -> Int {
    var histogram = [Int](repeating: 0, count: buckets)
    for need in needs { histogram[bucket(need)] += 1 }
    var above = 0
    for index in stride(from: buckets - 1, through: 0, by: -1) {
      if above + histogram[index] > allowed { return index }
      above += histogram[index]
    }
    return 0
  }

  /// How close each pixel of a `width` x `height` coverage (rows packed) is to the glyphs, 0...255:
  /// 255 within ``proximityRadius`` (in x and y) of a covered pixel, fading smoothly to 0 over
  /// about three ``proximitySigma`` past it (the grown coverage, blurred).
  static func proximity(_ coverage: [UInt8], width: Int, height: Int) -> [UInt8] {
    let radius = proximityRadius
    let across = grownAcross(coverage, width: width, height: height, radius: radius)
    var grown = [UInt8](repeating: 0, count: coverage.count)
    across.withUnsafeBufferPointer { across in
      grown.withUnsafeMutableBufferPointer { grown in
        guard let rows = across.baseAddress, let target = grown.baseAddress else { return }
        for y in 0..<height {
          let out = target + y * width
          for other in max(0, y - radius)..<min(height, y + radius + 1) {
            Blur.maximum(into: out, rows + other * width, count: width)
          }
        }
        for index in 0..<grown.count where grown[index] != 0 { grown[index] = 255 }
      }
    }
    return Blur.gaussian(grown, width: width, height: height, sigma: proximitySigma)
  }

  /// Deepens `shadow` (a `width` x `height` mask, rows packed) by the proximity to the glyphs:
  /// at proximity `p` (0...1) a pixel's alpha `a` becomes `1 - (1 - a)^(1 + (gain - 1) p) (1 -
  /// scrim p)`: the full strength next to the glyphs, the plain halo a few pixels away. The
  /// quote's strength applies above `authorRow`, the author's from it, changing linearly over
  /// the `ramp` rows before it (in quarters).
  static func deepen(
    _ shadow: inout [UInt8], proximity: [UInt8], width: Int, height: Int, quote: HaloStrength,
    author: HaloStrength, authorRow: Int?, ramp: Int
  ) {
    func strength(atRow y: Int) -> (gain: Double, scrim: Double) {
      let quoteStrength = (quote.gain, quote.scrim)
      guard let authorRow, author != quote else { return quoteStrength }
      if y >= authorRow { return (author.gain, author.scrim) }
      let start = authorRow - max(1, ramp)
      if y < start { return quoteStrength }
      // In quarters, so a few tables serve the whole ramp.
      let t = (Double(y - start) / Double(authorRow - start) * 4).rounded(.down) / 4
      return (quote.gain + (author.gain - quote.gain) * t, quote.scrim + (author.scrim - quote.scrim) * t)
    }
    guard quote != .plain || author != .plain else { return }
    // One table per strength: the deepened alpha for each of 16 proximity levels (rounded up)
    // and each alpha, so the pixels cost a look-up each.
    let levels = 16
    var table = [UInt8](repeating: 0, count: (levels + 1) * 256)
    var tableStrength = (gain: -1.0, scrim: -1.0)
    shadow.withUnsafeMutableBufferPointer { mask in
      proximity.withUnsafeBufferPointer { proximity in
        for y in 0..<height {
          let rowStrength = strength(atRow: y)
          if rowStrength != tableStrength {
            for level in 0...levels {
              let p = Double(level) / Double(levels)
              for alpha in 0..<256 {
                let clear =
                  alpha == 255
                  ? 0 : exp((1 + (rowStrength.gain - 1) * p) * logClear[alpha]) * (1 - rowStrength.scrim * p)
                table[level * 256 + alpha] = UInt8((255 * (1 - clear)).rounded())
              }
            }
            tableStrength = rowStrength
          }
          table.withUnsafeBufferPointer { table in
            let row = y * width
            for x in 0..<width where proximity[row + x] != 0 {
              let level = (Int(proximity[row + x]) * levels + 254) / 255
              mask[row + x] = table[level * 256 + Int(mask[row + x])]
            }
          }
        }
      }
    }
  }
}
