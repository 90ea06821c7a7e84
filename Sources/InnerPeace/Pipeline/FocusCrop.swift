/// Where the photo goes on a card: how much it is zoomed past the scale that covers the canvas,
/// and where the overflow is cropped.
///
/// The rule (part of the look): the photo is scaled to cover the canvas, times a zoom of 1,
/// 1.15 or 1.3 (``zooms``; never stretched, never more than 1.3 times what covering needs), and
/// placed anywhere that still covers the canvas (at most 33 places an axis, at least
/// ``step`` pixels apart, plus the centred place). Of these, the one chosen has, in order:
/// 1. the focus inside the canvas with a margin of a tenth of the canvas on each side, or as
///    near as it can be;
/// 2. the least cost: the overlap of the subject (a square around the focus, a fifth of the
///    photo's shorter scaled side) with the text block grown by 2 % of the canvas, in whole
///    quarters of the subject's area rounded up, two points a quarter, plus a point for each
///    zoom step of 0.15 (so the photo moves only when that clears a quarter of the subject, and
///    zooms only when each step clears half a quarter more);
/// 3. the least zoom, then the least distance from the centred place (ties: the centred crop).
/// A card whose subject is already clear of the text keeps today's centred crop.
struct FocusCrop: Hashable, Sendable {
  /// The zoom past the cover scale.
  let zoom: Double
  /// Where the overflow is cropped on each axis: 0 keeps the left (top) edge, 1 the right
  /// (bottom) edge, 0.5 crops it evenly.
  let shiftX: Double
  let shiftY: Double

  /// The centred crop at the cover scale: the crop before photos had a focus.
  static let centred = FocusCrop(zoom: 1, shiftX: 0.5, shiftY: 0.5)

  /// The zooms tried, in order of preference.
  static let zooms: [Double] = [1, 1.15, 1.3]
  /// The least step between the places tried, in pixels.
  static let step = 4.0
  /// The most steps tried along an axis (33 places), so a render tries at most some 3,300.
  static let maximumSteps = 32

  /// The crop for a photo of `photo` size (as seen) with its subject at `focus`, on a canvas of
  /// `canvas` size whose text block is `block` (`nil`: no text to keep clear of).
  static func choose(
    photo: (width: Int, height: Int), canvas: (width: Int, height: Int), focus: PictureFocus,
    block: PixelRect?
  ) -> FocusCrop {
    guard photo.width > 0, photo.height > 0, canvas.width > 0, canvas.height > 0 else { return .centred }
    let canvasWidth = Double(canvas.width)
    let canvasHeight = Double(canvas.height)
    let cover = max(canvasWidth / Double(photo.width), canvasHeight / Double(photo.height))
    let pad = 0.02 * min(canvasWidth, canvasHeight)
    let text = block.map {
      PixelRect(x: $0.x - pad, y: $0.y - pad, width: $0.width + 2 * pad, height: $0.height + 2 * pad)
    }
    let marginX = 0.1 * canvasWidth
    let marginY = 0.1 * canvasHeight

    // The score of placing the photo's top-left corner at (left, top) at `zoom`, lower better.
    func score(zoom: Double, left: Double, top: Double) -> (miss: Double, cost: Double) {
      let width = Double(photo.width) * cover * zoom
      let height = Double(photo.height) * cover * zoom
      let fx = left + focus.x * width
      let fy = top + focus.y * height
      let missX = max(0, marginX - fx) + max(0, fx - (canvasWidth - marginX))
      let missY = max(0, marginY - fy) + max(0, fy - (canvasHeight - marginY))
      var overlap = 0.0
      if let text {
        let half = 0.1 * min(width, height)
        let ox = max(0, min(fx + half, text.maxX) - max(fx - half, text.x))
        let oy = max(0, min(fy + half, text.maxY) - max(fy - half, text.y))
        overlap = ox * oy / (4 * half * half)
      }
      // Whole pixels of miss; overlap in quarters of the subject (two points each), a zoom step
      // one point: small gains never move the photo, and a zoom must clear half a quarter.
      let quarters = (overlap * 4 - 1e-9).rounded(.up)
      let zoomSteps = ((zoom - 1) / 0.15).rounded()
      return ((missX + missY).rounded(), 2 * max(0, quarters) + zoomSteps)
    }

    var best = FocusCrop.centred
    var bestScore = score(
      zoom: 1, left: (canvasWidth - Double(photo.width) * cover) / 2,
      top: (canvasHeight - Double(photo.height) * cover) / 2)
    var bestDistance = 0.0
    for zoom in zooms {
      let width = Double(photo.width) * cover * zoom
      let height = Double(photo.height) * cover * zoom
      let overflowX = width - canvasWidth
      let overflowY = height - canvasHeight
      let stepsX = min(maximumSteps, Int((overflowX / step).rounded(.down)))
      let stepsY = min(maximumSteps, Int((overflowY / step).rounded(.down)))
      for ix in 0...max(0, stepsX) {
        let left = stepsX < 1 ? (canvasWidth - width) / 2 : -Double(ix) * overflowX / Double(stepsX)
        for iy in 0...max(0, stepsY) {
          let top = stepsY < 1 ? (canvasHeight - height) / 2 : -Double(iy) * overflowY / Double(stepsY)
          let candidate = score(zoom: zoom, left: left, top: top)
          let shiftX = stepsX < 1 ? 0.5 : -left / overflowX
          let shiftY = stepsY < 1 ? 0.5 : -top / overflowY
          let distance = ((shiftX - 0.5) * overflowX).magnitude + ((shiftY - 0.5) * overflowY).magnitude
          let better =
            candidate.miss < bestScore.miss
            || (candidate.miss == bestScore.miss
              && (candidate.cost < bestScore.cost
                || (candidate.cost == bestScore.cost && zoom == best.zoom && distance < bestDistance)))
          if better {
            best = FocusCrop(zoom: zoom, shiftX: shiftX, shiftY: shiftY)
            bestScore = candidate
            bestDistance = distance
          }
        }
      }
    }
    return best
  }
}
