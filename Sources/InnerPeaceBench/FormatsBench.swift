internal import CInnerPeace
import Foundation
import InnerPeace

/// `innerpeace-bench formats [--runs N]`: for `og` and `story`, each format's encode time (the
/// renderer's own encode stage, warm, median), size, and distance from the lossless PNG (PSNR over
/// R, G and B; SSIM of luma over 8x8 windows), decoding each file with its own library.
func formats(runs: Int) throws {
  let catalog = try Catalog.bundled()
  let renderer = try CardRenderer(catalog: catalog)
  let medium = catalog.quotes.indices.min(by: {
    abs(catalog.quotes[$0].text.count - 160) < abs(catalog.quotes[$1].text.count - 160)
  })!
  print("Encode medians over \(runs) runs (ms, one thread), quote \(medium), picture \(catalog.pictures[0]);")
  print("default qualities (JPEG and WebP 90, AVIF quantizer 12). PSNR and SSIM against the card's PNG.")
  print("")
  print("| preset | format | encode ms | KB | vs WebP time | vs WebP size | PSNR dB | SSIM |")
  print("|---|---|---:|---:|---:|---:|---:|---:|")
  for preset in [Preset.og, .story] {
    var request = CardRequest(preset: preset, quote: .index(medium), picture: .named(catalog.pictures[0]), seed: 1)
    let reference = try decodePNG(try renderer.render(request).bytes)
    var webp: (time: Double, size: Int)? = nil
    for format in [ImageFormat.webp, .png, .jpeg, .avif] {
      request.format = format
      var card = try renderer.render(request)
      var times: [Double] = []
      for _ in 0..<runs {
        card = try renderer.render(request)
        times.append(card.timings.encode)
      }
      let time = median(times)
      if format == .webp { webp = (time, card.bytes.count) }
      let decoded = try decode(card.bytes, format: format)
      let (psnr, ssim) = distance(decoded, reference)
      print(
        "| \(preset) | \(format.rawValue) | \(milliseconds(time)) | \(card.bytes.count / 1024) | "
          + String(format: "%.2fx | %.2fx | ", time / webp!.time, Double(card.bytes.count) / Double(webp!.size))
          + (psnr.isInfinite ? "lossless | 1" : String(format: "%.2f | %.4f", psnr, ssim)) + " |")
    }
  }
}

/// `innerpeace-bench formats --cards N`: AVIF against WebP at their default qualities over N
/// catalog cards (quote `7 * i`, picture `i`) for `og` and `story`: the median size ratio and
/// how often AVIF's SSIM and PSNR are at least WebP's.
func formatsOverCards(_ count: Int) throws {
  let catalog = try Catalog.bundled()
  let renderer = try CardRenderer(catalog: catalog)
  print("AVIF (quantizer 12) against WebP (quality 90) over \(count) cards, each against its PNG.")
  print("")
  print(
    "| preset | AVIF/WebP size, median (min-max) | AVIF SSIM >= WebP's | AVIF PSNR >= WebP's | median SSIM WebP, AVIF |"
  )
  print("|---|---:|---:|---:|---:|")
  for preset in [Preset.og, .story] {
    var ratios: [Double] = []
    var ssims: (webp: [Double], avif: [Double]) = ([], [])
    var better = (ssim: 0, psnr: 0)
    for index in 0..<count {
      var request = CardRequest(
        preset: preset, quote: .index(7 * index % catalog.quotes.count),
        picture: .named(catalog.pictures[index % catalog.pictures.count]), seed: 1)
      let reference = try decodePNG(try renderer.render(request).bytes)
      request.format = .webp
      let webp = try renderer.render(request).bytes
      request.format = .avif
      let avif = try renderer.render(request).bytes
      let webpDistance = distance(try decode(webp, format: .webp), reference)
      let avifDistance = distance(try decode(avif, format: .avif), reference)
      ratios.append(Double(avif.count) / Double(webp.count))
      ssims.webp.append(webpDistance.ssim)
      ssims.avif.append(avifDistance.ssim)
      if avifDistance.ssim >= webpDistance.ssim { better.ssim += 1 }
      if avifDistance.psnr >= webpDistance.psnr { better.psnr += 1 }
    }
    print(
      "| \(preset) | "
        + String(format: "%.2f (%.2f-%.2f)", median(ratios), ratios.min()!, ratios.max()!)
        + " | \(better.ssim)/\(count) | \(better.psnr)/\(count) | "
        + String(format: "%.4f, %.4f", median(ssims.webp), median(ssims.avif)) + " |")
  }
}

/// Packed RGBA rows.
private struct Pixels {
  let width: Int
  let height: Int
  let rgba: [UInt8]
}

private func decode(_ bytes: [UInt8], format: ImageFormat) throws -> Pixels {
  switch format {
  case .png: return try decodePNG(bytes)
  case .jpeg:
    guard let handle = tjInitDecompress() else { fail("libturbojpeg cannot start") }
    defer { tjDestroy(handle) }
    var width: Int32 = 0
    var height: Int32 = 0
    var subsampling: Int32 = 0
    var colourspace: Int32 = 0
    guard tjDecompressHeader3(handle, bytes, UInt(bytes.count), &width, &height, &subsampling, &colourspace) == 0
    else { fail("not a JPEG") }
    var rgba = [UInt8](repeating: 0, count: Int(width * height * 4))
    guard
      tjDecompress2(handle, bytes, UInt(bytes.count), &rgba, width, width * 4, height, Int32(TJPF_RGBX.rawValue), 0)
        == 0
    else { fail("the JPEG does not decode") }
    return Pixels(width: Int(width), height: Int(height), rgba: rgba)
  case .webp:
    var width: Int32 = 0
    var height: Int32 = 0
    guard let data = WebPDecodeRGBA(bytes, bytes.count, &width, &height) else { fail("the WebP does not decode") }
    defer { WebPFree(data) }
    return Pixels(
      width: Int(width), height: Int(height),
      rgba: Array(UnsafeBufferPointer(start: data, count: Int(width * height * 4))))
  case .avif:
    guard let image = DecodedAVIF(bytes) else { fail("the AVIF does not decode") }
    return Pixels(width: image.width, height: image.height, rgba: image.rgba)
  }
}

/// Decodes a PNG with Cairo (libpng), to straight RGBA for an opaque card.
private func decodePNG(_ bytes: [UInt8]) throws -> Pixels {
  let file = FileManager.default.temporaryDirectory.appendingPathComponent("innerpeace-bench-\(getpid()).png")
  try Data(bytes).write(to: file)
  defer { try? FileManager.default.removeItem(at: file) }
  guard let surface = cairo_image_surface_create_from_png(file.path) else { fail("cairo returned no surface") }
  defer { cairo_surface_destroy(surface) }
  let width = Int(cairo_image_surface_get_width(surface))
  let height = Int(cairo_image_surface_get_height(surface))
  let stride = Int(cairo_image_surface_get_stride(surface))
  guard let data = cairo_image_surface_get_data(surface) else { fail("the PNG does not decode") }
  var rgba = [UInt8](repeating: 255, count: width * height * 4)
  for y in 0..<height {
    for x in 0..<width {
      let source = data + y * stride + x * 4  // BGRX in memory
      let target = 4 * (y * width + x)
      rgba[target] = source[2]
      rgba[target + 1] = source[1]
      rgba[target + 2] = source[0]
    }
  }
  return Pixels(width: width, height: height, rgba: rgba)
}

/// PSNR over R, G and B, and the mean SSIM of luma over 8x8 windows every 4 pixels.
private func distance(_ image: Pixels, _ reference: Pixels) -> (psnr: Double, ssim: Double) {
  precondition(image.width == reference.width && image.height == reference.height, "sizes differ")
  let width = reference.width
  var squares = 0.0
  for pixel in 0..<(width * reference.height) {
    for channel in 0..<3 {
      let difference = Double(image.rgba[4 * pixel + channel]) - Double(reference.rgba[4 * pixel + channel])
      squares += difference * difference
    }
  }
  let psnr = 10 * log10(255 * 255 / (squares / Double(width * reference.height * 3)))
  func luma(_ pixels: Pixels, _ x: Int, _ y: Int) -> Double {
    let i = 4 * (y * width + x)
    return 0.299 * Double(pixels.rgba[i]) + 0.587 * Double(pixels.rgba[i + 1]) + 0.114 * Double(pixels.rgba[i + 2])
  }
  let (c1, c2) = (6.5025, 58.5225)  // (0.01 * 255)^2, (0.03 * 255)^2
  var total = 0.0
  var windows = 0
  for top in stride(from: 0, through: reference.height - 8, by: 4) {
    for left in stride(from: 0, through: width - 8, by: 4) {
      var (meanA, meanB, squareA, squareB, product) = (0.0, 0.0, 0.0, 0.0, 0.0)
      for y in top..<top + 8 {
        for x in left..<left + 8 {
          let a = luma(image, x, y)
          let b = luma(reference, x, y)
          meanA += a
          meanB += b
          squareA += a * a
          squareB += b * b
          product += a * b
        }
      }
      meanA /= 64
      meanB /= 64
      let varianceA = squareA / 64 - meanA * meanA
      let varianceB = squareB / 64 - meanB * meanB
      let covariance = product / 64 - meanA * meanB
      total +=
        ((2 * meanA * meanB + c1) * (2 * covariance + c2))
        / ((meanA * meanA + meanB * meanB + c1) * (varianceA + varianceB + c2))
      windows += 1
    }
  }
  return (psnr, total / Double(windows))
}
