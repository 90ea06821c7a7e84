/// Scales a photo to cover a canvas: scaled until both sides cover it (times the crop's zoom),
/// the overflow cropped where the crop says (``FocusCrop``; evenly for the centred crop), never
/// stretched.
enum BackgroundScaler {
  /// Paints `source`, scaled to cover it, over the whole of `canvas` (an RGB24 surface).
  static func cover(_ source: Pixels, onto canvas: ImageSurface, crop: FocusCrop = .centred)
    throws(InnerPeaceError)
  {
    try cover(DecodedPhoto(whole: source), onto: canvas, crop: crop)
  }

  /// Paints `photo` as its whole decoded image: a part decoded into its place in it paints the
  /// same canvas, as long as the part holds every pixel the scaler reads (``shownPart``).
  static func cover(_ photo: DecodedPhoto, onto canvas: ImageSurface, crop: FocusCrop = .centred)
    throws(InnerPeaceError)
  {
    let source = photo.pixels
    if photo.part == nil && source.width == canvas.width && source.height == canvas.height && crop.zoom == 1 {
      source.copy(into: canvas)
      return
    }
    let scale =
      max(Double(canvas.width) / Double(source.width), Double(canvas.height) / Double(source.height)) * crop.zoom
    let context = try DrawingContext(surface: canvas)
    try context.paint(
      source, scale: scale, x: (Double(canvas.width) - Double(source.width) * scale) * crop.shiftX,
      y: (Double(canvas.height) - Double(source.height) * scale) * crop.shiftY)
    canvas.flush()
  }

  /// The rectangle of a photo decoded at `decoded` size that ``cover(_:onto:crop:)`` reads for
  /// `crop` on `canvas`: the pixels the canvas shows, and around them as many again as the
  /// filter reaches (Cairo's good filter: a bilinear tap when enlarging, a box of about 1 / scale
  /// pixels when reducing) plus two. `nil` when that is most of the photo (nine tenths of its
  /// area or more), where decoding a part saves too little.
  static func shownPart(
    decoded: (width: Int, height: Int), canvas: (width: Int, height: Int), crop: FocusCrop
  ) -> (x: Int, y: Int, width: Int, height: Int)? {
    guard decoded.width > 0, decoded.height > 0, canvas.width > 0, canvas.height > 0 else { return nil }
    let scale =
      max(Double(canvas.width) / Double(decoded.width), Double(canvas.height) / Double(decoded.height)) * crop.zoom
    let left = (Double(canvas.width) - Double(decoded.width) * scale) * crop.shiftX
    let top = (Double(canvas.height) - Double(decoded.height) * scale) * crop.shiftY
    let margin = Int((2 / min(scale, 1)).rounded(.up)) + 2
    let x0 = max(0, Int((-left / scale).rounded(.down)) - margin)
    let y0 = max(0, Int((-top / scale).rounded(.down)) - margin)
    let x1 = min(decoded.width, Int(((Double(canvas.width) - left) / scale).rounded(.up)) + margin)
    let y1 = min(decoded.height, Int(((Double(canvas.height) - top) / scale).rounded(.up)) + margin)
    guard x1 > x0, y1 > y0, (x1 - x0) * (y1 - y0) * 10 < decoded.width * decoded.height * 9 else { return nil }
    return (x0, y0, x1 - x0, y1 - y0)
  }
}

/// A decoded photo (``ImageDecoding/decode(_:covering:part:)``): the whole image, or only a part
/// of it decoded, in its place in a buffer of the whole image's size. Outside the part its bytes
/// are not the image's: most are never written (their pages cost no memory), a few columns
/// beside it are libjpeg's crop margin. Nothing reads them (``BackgroundScaler/shownPart``).
struct DecodedPhoto: Sendable {
  /// The whole decoded image's size; only `part`'s pixels are set when there is one.
  let pixels: Pixels
  /// The rectangle decoded, or `nil` for the whole image.
  let part: (x: Int, y: Int, width: Int, height: Int)?

  init(whole pixels: Pixels) {
    self.pixels = pixels
    part = nil
  }

  init(pixels: Pixels, part: (x: Int, y: Int, width: Int, height: Int)) {
    self.pixels = pixels
    self.part = part
  }
}
