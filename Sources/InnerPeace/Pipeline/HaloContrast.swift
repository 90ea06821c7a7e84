import Foundation

/// How much the halo is deepened over a bright photo: the shadow stacked more times, and, where
/// that alone is not enough, a light, widely feathered scrim behind the text block.
struct HaloStrength: Equatable, Sendable {
  /// How many times the shadow mask is stacked over itself, `1 - (1 - alpha)^gain` (at least 1:
  /// the plain halo; fractions allowed). Like adding passes, it darkens the faint tail most and
  /// never turns the glow into a hard edge.
  var gain: Double = 1
  /// The opacity of the black scrim behind the block, from 0 up to ``HaloContrast/maximumScrim``.
  var scrim: Double = 0

  static let plain = HaloStrength()
}

/// What the halo stage saw and chose, for tests and tools: the text image's rectangle on the
/// canvas, the text's coverage there (rows packed), the first row of the author line (if any)
/// and the strength chosen for the quote and the author line.
struct HaloProbe: Sendable {
  var left: Int
  var top: Int
  var width: Int
  var height: Int
  var coverage: [UInt8]
  var authorRow: Int?
  var quoteStrength: HaloStrength
  var authorStrength: HaloStrength
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
  /// The darkest scrim: 25 % black.
  static let maximumScrim = 0.25
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
    var across = [UInt8](repeating: 0, count: coverage.count)
    coverage.withUnsafeBufferPointer { source in
      across.withUnsafeMutableBufferPointer { target in
        for y in 0..<height {
          let row = y * width
          var last = -radius - 1
          for x in 0..<width {
            if source[row + x] > 0 { last = x }
            if x - last <= radius { target[row + x] = 1 }
          }
          last = width + radius + 1
          for x in stride(from: width - 1, through: 0, by: -1) {
            if source[row + x] > 0 { last = x }
            if last - x <= radius { target[row + x] = 1 }
          }
        }
      }
    }
    var result = [Bool](repeating: false, count: coverage.count)
    across.withUnsafeBufferPointer { across in
      coverage.withUnsafeBufferPointer { source in
        result.withUnsafeMutableBufferPointer { result in
          for y in 0..<height {
            let low = max(0, y - radius)
            let high = min(height - 1, y + radius)
            for x in 0..<width where source[y * width + x] == 0 {
              var near = false
              for other in low...high where across[other * width + x] > 0 {
                near = true
                break
              }
              result[y * width + x] = near
            }
          }
        }
      }
    }
    return result
  }

  /// The strengths that bring the ring to the target over this background, for the quote (rows
  /// above `authorRow`) and the author line (rows from it).
  /// - Parameters:
  ///   - coverage: the text's coverage in the text image, rows packed.
  ///   - shadow: the plain stacked shadow mask of the same image.
  ///   - background: the canvas's pixels (BGRX) at the text image's top-left corner.
  ///   - stride: bytes per canvas row.
  static func strengths(
    coverage: [UInt8], shadow: [UInt8], width: Int, height: Int, background: UnsafePointer<UInt8>, stride: Int,
    authorRow: Int?
  ) -> (quote: HaloStrength, author: HaloStrength) {
    let ring = Self.ring(coverage, width: width, height: height)
    let targetRoot = pow(1.05 / target - 0.05, 1 / 2.2)
    // For each ring pixel: the factor its colour must shrink by, and its shadow.
    var needs: [[(factor: Double, shadow: Double)]] = [[], []]
    var counts = [0, 0]
    for y in 0..<height {
      let line = authorRow.map { y >= $0 ? 1 : 0 } ?? 0
      let pixels = background + y * stride
      for x in 0..<width where ring[y * width + x] {
        counts[line] += 1
        let pixel = pixels + 4 * x
        let luminance = Self.luminance(red: pixel[2], green: pixel[1], blue: pixel[0])
        let factor = targetRoot / root[min(4096, Int(luminance * 4096))]
        guard factor < 1 else { continue }
        needs[line].append((factor, Double(shadow[y * width + x]) / 255))
      }
    }
    return (strength(needs[0], ringCount: counts[0]), strength(needs[1], ringCount: counts[1]))
  }

  /// The least strength that brings all but `1 - quantile` of `ringCount` pixels to the target,
  /// `needs` being the pixels short of it. The quantiles are read from histograms (steps of
  /// 1/100 in gain, 1/1000 in scrim, rounded up): linear time, however many pixels.
  private static func strength(_ needs: [(factor: Double, shadow: Double)], ringCount: Int) -> HaloStrength {
    // How many pixels may stay short of the target.
    let allowed = Int((Double(ringCount) * (1 - quantile)).rounded(.down))
    guard needs.count > allowed else { return .plain }
    // The passes each pixel needs: (1 - alpha)^gain must come down to its factor.
    let gainSteps = Int(maximumGain * 100)
    let gainBucket = upperQuantile(of: needs, buckets: gainSteps + 1, allowed: allowed) { need in
      guard need.shadow > 0 else { return gainSteps }
      guard need.shadow < 1 else { return 0 }
      return min(gainSteps, Int((log(need.factor) / log(1 - need.shadow) * 100).rounded(.up)))
    }
    if gainBucket < gainSteps { return HaloStrength(gain: max(1, Double(gainBucket) / 100), scrim: 0) }
    // The gain alone is not enough: the scrim takes what is left.
    let scrimBucket = upperQuantile(of: needs, buckets: 1001, allowed: allowed) { need in
      let alpha = 1 - pow(1 - need.shadow, maximumGain)
      return alpha >= 1 ? 0 : min(1000, Int((max(0, 1 - need.factor / (1 - alpha)) * 1000).rounded(.up)))
    }
    return HaloStrength(gain: maximumGain, scrim: min(maximumScrim, Double(scrimBucket) / 1000))
  }

  /// The smallest bucket such that at most `allowed` of `needs` fall above it.
  private static func upperQuantile(
    of needs: [(factor: Double, shadow: Double)], buckets: Int, allowed: Int,
    bucket: ((factor: Double, shadow: Double)) -> Int
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

  /// Deepens `shadow` (a `width` x `height` mask, rows packed): the quote's passes above
  /// `authorRow`, the author's from it, changing linearly over the `ramp` rows before it.
  static func deepen(
    _ shadow: inout [UInt8], width: Int, height: Int, quote: HaloStrength, author: HaloStrength, authorRow: Int?,
    ramp: Int
  ) {
    func gain(atRow y: Int) -> Double {
      guard let authorRow, author.gain != quote.gain else { return quote.gain }
      if y >= authorRow { return author.gain }
      let start = authorRow - max(1, ramp)
      if y < start { return quote.gain }
      return quote.gain + (author.gain - quote.gain) * Double(y - start) / Double(authorRow - start)
    }
    guard quote.gain > 1 || author.gain > 1 else { return }
    shadow.withUnsafeMutableBufferPointer { mask in
      var table = [UInt8](repeating: 0, count: 256)
      var tableGain = -1.0
      for y in 0..<height {
        let rowGain = gain(atRow: y)
        if rowGain != tableGain {
          for value in 0..<256 {
            table[value] = UInt8((255 * (1 - pow(1 - Double(value) / 255, rowGain))).rounded())
          }
          tableGain = rowGain
        }
        let row = y * width
        for x in 0..<width { mask[row + x] = table[Int(mask[row + x])] }
      }
    }
  }

  /// The scrim's mask: `opacity` behind `block` (canvas coordinates), fading smoothly to nothing
  /// `feather` pixels outside it, with round corners; its origin and size on the canvas.
  static func scrim(
    opacity: Double, block: PixelRect, feather: Double, canvasWidth: Int, canvasHeight: Int
  ) -> (mask: [UInt8], left: Int, top: Int, width: Int, height: Int)? {
    let left = max(0, Int((block.x - feather).rounded(.down)))
    let top = max(0, Int((block.y - feather).rounded(.down)))
    let right = min(canvasWidth, Int((block.maxX + feather).rounded(.up)))
    let bottom = min(canvasHeight, Int((block.maxY + feather).rounded(.up)))
    let (width, height) = (right - left, bottom - top)
    guard opacity > 0, width > 0, height > 0 else { return nil }
    var mask = [UInt8](repeating: 0, count: width * height)
    for y in 0..<height {
      let centre = Double(top + y) + 0.5
      let dy = max(0, block.y - centre, centre - block.maxY)
      for x in 0..<width {
        let across = Double(left + x) + 0.5
        let dx = max(0, block.x - across, across - block.maxX)
        let t = min(1, (dx * dx + dy * dy).squareRoot() / feather)
        mask[y * width + x] = UInt8((255 * opacity * (1 - t * t * (3 - 2 * t))).rounded())
      }
    }
    return (mask, left, top, width, height)
  }
}
