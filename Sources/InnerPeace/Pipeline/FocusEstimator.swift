/// Estimates where a photo's subject is, for a picture whose entry in `pictures.json` gives no
/// focus: once per photo, when the catalog loads, on a small thumbnail.
///
/// The rule (its ``version`` counts in the content version, so change both together):
/// 1. Decode the photo reduced as far as it still covers ``decodeSide`` pixels a side (a JPEG
///    at 1/8 of its size by DCT scaling, a PNG by box averaging), then box-average it to a grid
///    whose longer side is at most ``gridSide`` cells.
/// 2. Saliency of a cell: the distance of its colour (RGB, 0...1) from the mean of its 9x9
///    surround (colour distinctness) plus that from the mean of its 3x3 neighbourhood (local
///    contrast), times a mild centre weight (1 at the centre, 0.7 in the corners).
/// 3. The map is smoothed with a 3x3 box; the focus is the saliency-weighted centroid of the
///    cells in the top twentieth of the map (ties broken by position, so the choice is
///    deterministic). A flat photo, with no cell standing out, has its focus in the centre.
///
/// Cost: one reduced decode (a 2400x1500 JPEG decodes at 300x188) and some 30,000 operations on
/// the grid, a few milliseconds a photo (BENCHMARKS.md). A photo given a focus is not decoded.
enum FocusEstimator {
  /// The version of the rule above.
  static let version = 1
  /// The side the decode covers (the photo is decoded no smaller than this).
  static let decodeSide = 64
  /// The longer side of the grid the saliency is computed on.
  static let gridSide = 48
  /// The radius, in cells, of the surround a cell's colour is compared with.
  static let surroundRadius = 4

  /// The focus of a photo's bytes (already checked), rounded to thousandths.
  /// - Throws: ``InnerPeaceError/decodingFailed(reason:)`` when the bytes do not decode.
  static func estimate(_ bytes: [UInt8]) throws(InnerPeaceError) -> PictureFocus {
    let pixels = try ImageDecoding.decode(bytes, covering: (decodeSide, decodeSide))
    return estimate(pixels)
  }

  /// The focus of decoded pixels (B G R X), rounded to thousandths.
  static func estimate(_ pixels: Pixels) -> PictureFocus {
    let grid = Grid(pixels, side: gridSide)
    let point = focus(of: grid)
    return PictureFocus(
      x: (point.x * 1000).rounded() / 1000, y: (point.y * 1000).rounded() / 1000, estimated: true)
  }

  /// Colour cells of a photo: mean R, G, B in 0...1 per cell.
  struct Grid {
    let width: Int
    let height: Int
    /// `width * height * 3` values, rows top to bottom.
    var values: [Double]

    init(width: Int, height: Int, values: [Double]) {
      self.width = width
      self.height = height
      self.values = values
    }

    /// Box-averages `pixels` to a grid whose longer side is at most `side` cells.
    init(_ pixels: Pixels, side: Int) {
      let cell = max(1, (max(pixels.width, pixels.height) + side - 1) / side)
      let width = max(1, pixels.width / cell)
      let height = max(1, pixels.height / cell)
      var sums = [Double](repeating: 0, count: width * height * 3)
      pixels.bytes.withUnsafeBufferPointer { bytes in
        for row in 0..<(height * cell) {
          let gridRow = row / cell
          for column in 0..<(width * cell) {
            let source = (row * pixels.width + column) * 4
            let target = (gridRow * width + column / cell) * 3
            sums[target] += Double(bytes[source + 2])
            sums[target + 1] += Double(bytes[source + 1])
            sums[target + 2] += Double(bytes[source])
          }
        }
      }
      let scale = 1 / (255 * Double(cell * cell))
      self.init(width: width, height: height, values: sums.map { $0 * scale })
    }
  }

  /// The mean of each channel over the square of cells within `radius` of each cell (clipped
  /// at the edges), for `channels` values a cell.
  static func boxMean(_ values: [Double], width: Int, height: Int, channels: Int, radius: Int) -> [Double] {
    var result = [Double](repeating: 0, count: values.count)
    for y in 0..<height {
      for x in 0..<width {
        let rows = max(0, y - radius)...min(height - 1, y + radius)
        let columns = max(0, x - radius)...min(width - 1, x + radius)
        let cells = Double(rows.count * columns.count)
        for channel in 0..<channels {
          var sum = 0.0
          for row in rows {
            for column in columns { sum += values[(row * width + column) * channels + channel] }
          }
          result[(y * width + x) * channels + channel] = sum / cells
        }
      }
    }
    return result
  }

  /// The saliency-weighted centroid of the most salient twentieth of `grid`, in fractions of it.
  static func focus(of grid: Grid) -> (x: Double, y: Double) {
    let width = grid.width
    let height = grid.height
    let count = width * height
    guard count > 1 else { return (0.5, 0.5) }
    let values = grid.values
    let surround = boxMean(values, width: width, height: height, channels: 3, radius: surroundRadius)
    let near = boxMean(values, width: width, height: height, channels: 3, radius: 1)
    func distance(_ a: [Double], _ index: Int) -> Double {
      let dr = values[index * 3] - a[index * 3]
      let dg = values[index * 3 + 1] - a[index * 3 + 1]
      let db = values[index * 3 + 2] - a[index * 3 + 2]
      return (dr * dr + dg * dg + db * db).squareRoot()
    }
    var raw = [Double](repeating: 0, count: count)
    for y in 0..<height {
      for x in 0..<width {
        let index = y * width + x
        // Distance from the centre in fractions of each side: 0 there, 0.5 in a corner.
        let cx = (Double(x) + 0.5) / Double(width) - 0.5
        let cy = (Double(y) + 0.5) / Double(height) - 0.5
        let weight = 1 - 0.6 * (cx * cx + cy * cy)
        raw[index] = (distance(surround, index) + distance(near, index)) * weight
      }
    }
    // Smoothed with a 3x3 box, so that a region outweighs a single speck.
    let saliency = boxMean(raw, width: width, height: height, channels: 1, radius: 1)
    let ranked = (0..<count).sorted { saliency[$0] > saliency[$1] || (saliency[$0] == saliency[$1] && $0 < $1) }
    let top = ranked.prefix(max(1, count / 20))
    let floor = saliency[ranked[ranked.count - 1]]
    // Flat: nothing stands out from the rest by more than a trace.
    guard let first = top.first, saliency[first] - floor > 1e-3 else { return (0.5, 0.5) }
    var total = 0.0
    var sx = 0.0
    var sy = 0.0
    for index in top {
      let weight = saliency[index] - floor
      total += weight
      sx += weight * (Double(index % width) + 0.5)
      sy += weight * (Double(index / width) + 0.5)
    }
    guard total > 0 else { return (0.5, 0.5) }
    return (sx / total / Double(width), sy / total / Double(height))
  }
}
