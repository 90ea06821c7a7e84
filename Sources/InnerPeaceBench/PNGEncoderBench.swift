internal import CInnerPeace
import Foundation
import InnerPeace

/// The PNG encoder alone (issue 21), per preset: the card's pixels encoded by the current encoder
/// and by the one before it (every row Up-filtered, libdeflate level 1), alternating in the same
/// process; median milliseconds, MB/s of raw pixels (3 bytes a pixel) and each file's size
/// against libpng's default writer's (zlib 6, adaptive filters) on the same pixels; and the
/// current encoder on two threads (`renderOne`'s, the command line's: the same file), its wall time.
func pngEncoderTable(runs: Int, catalog: Catalog, renderer: CardRenderer, quote: Int) throws {
  print("")
  print(
    "PNG encoder alone, median of \(runs) runs each, old, new and new on two threads alternating (raw = 3 bytes a pixel)."
  )
  print("")
  print(
    "| preset | raw MB | new ms | new MB/s | new KB | new / libpng | old ms | old MB/s | old KB | old / libpng | speed-up | new, 2 threads ms |"
  )
  print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  for preset in [Preset.og, .classic, .square, .story] {
    let request = CardRequest(preset: preset, quote: .index(quote), picture: .named(catalog.pictures[0]), seed: 1)
    let card = try renderer.render(request)
    let reference = Double(libpngDefaultSize(of: card.bytes))
    guard let surface = cairoSurface(fromPNG: card.bytes) else { fail("could not decode the card") }
    defer { cairo_surface_destroy(surface) }
    let width = Int(cairo_image_surface_get_width(surface))
    let height = Int(cairo_image_surface_get_height(surface))
    let stride = Int(cairo_image_surface_get_stride(surface))
    let pixels = UnsafePointer(cairo_image_surface_get_data(surface)!)
    let clock = ContinuousClock()
    var newTimes: [Double] = []
    var oldTimes: [Double] = []
    var pairTimes: [Double] = []
    var newBytes: [UInt8] = []
    var oldBytes: [UInt8] = []
    for _ in 0..<runs {
      var start = clock.now
      newBytes = try ImageEncoding.png(pixels: pixels, stride: stride, width: width, height: height, alpha: false)
      newTimes.append((clock.now - start) / .seconds(1))
      start = clock.now
      oldBytes = try ImageEncoding.pngLibdeflateUp(
        pixels: pixels, stride: stride, width: width, height: height, alpha: false)
      oldTimes.append((clock.now - start) / .seconds(1))
      start = clock.now
      let pair = try ImageEncoding.png(
        pixels: pixels, stride: stride, width: width, height: height, alpha: false, threads: 2)
      pairTimes.append((clock.now - start) / .seconds(1))
      guard pair == newBytes else { fail("two threads wrote another file than one") }
    }
    let raw = Double(width * height * 3)
    let newTime = median(newTimes)
    let oldTime = median(oldTimes)
    let cells = [
      String(format: "%.2f", raw / 1e6), milliseconds(newTime), String(format: "%.0f", raw / 1e6 / newTime),
      "\(newBytes.count / 1024)", String(format: "%.3f", Double(newBytes.count) / reference), milliseconds(oldTime),
      String(format: "%.0f", raw / 1e6 / oldTime), "\(oldBytes.count / 1024)",
      String(format: "%.3f", Double(oldBytes.count) / reference), String(format: "%.2fx", oldTime / newTime),
      milliseconds(median(pairTimes)),
    ]
    print("| \(preset) | \(cells.joined(separator: " | ")) |")
  }
}

/// A Cairo image surface decoded from PNG bytes (through libpng), or nil.
func cairoSurface(fromPNG png: [UInt8]) -> OpaquePointer? {
  final class Reader {
    let bytes: [UInt8]
    var offset = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
  }
  let reader = Reader(png)
  let surface = withExtendedLifetime(reader) {
    cairo_image_surface_create_from_png_stream(
      { closure, data, length in
        let reader = Unmanaged<Reader>.fromOpaque(closure!).takeUnretainedValue()
        guard reader.offset + Int(length) <= reader.bytes.count, let data else { return CAIRO_STATUS_READ_ERROR }
        reader.bytes.withUnsafeBufferPointer { data.update(from: $0.baseAddress! + reader.offset, count: Int(length)) }
        reader.offset += Int(length)
        return CAIRO_STATUS_SUCCESS
      }, Unmanaged.passUnretained(reader).toOpaque())
  }
  guard let surface, cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else {
    if let surface { cairo_surface_destroy(surface) }
    return nil
  }
  return surface
}
