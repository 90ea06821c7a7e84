// innerpeace-bench colour: what a photo's colour profile costs at decode.
internal import CInnerPeace
import Foundation
import InnerPeace

/// Decode-stage medians (a cold renderer, so every run decodes) for the same photo with no
/// profile, with an sRGB profile, and with a Display P3 profile, as JPEG and as PNG.
func colour(runs: Int) throws {
  let bundled = try Catalog.bundled()
  let name = bundled.pictures[0]
  let jpeg = [UInt8](try Data(contentsOf: bundled.directory.appendingPathComponent(name)))
  let png = try pngOf(jpeg)
  let p3 = try profile(primaries: [(0.680, 0.320), (0.265, 0.690), (0.150, 0.060)])
  let sRGB = try profile(primaries: [(0.64, 0.33), (0.30, 0.60), (0.15, 0.06)])
  let photos: [(String, [UInt8])] = [
    ("none.jpg", jpeg), ("srgb.jpg", withAPP2(jpeg, sRGB)), ("p3.jpg", withAPP2(jpeg, p3)),
    ("none.png", png), ("srgb.png", try withICCP(png, sRGB)), ("p3.png", try withICCP(png, p3)),
  ]
  let folder = FileManager.default.temporaryDirectory.appendingPathComponent("innerpeace-colour-\(getpid())")
  try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: folder) }
  try Data(#"[{"text": "Calm", "author": ""}]"#.utf8).write(to: folder.appendingPathComponent("quotes.json"))
  try JSONSerialization.data(withJSONObject: photos.map(\.0)).write(to: folder.appendingPathComponent("pictures.json"))
  for (file, bytes) in photos { try Data(bytes).write(to: folder.appendingPathComponent(file)) }
  let renderer = try CardRenderer(catalog: try Catalog(directory: folder), backgroundCacheBytes: 0)
  print("Decode-stage medians over \(runs) runs (ms), one thread, cold (every run decodes): \(name),")
  print("as it is and re-encoded as PNG, with no profile, an sRGB profile and a Display P3 profile;")
  print("and the render's CPU time on its thread (the same work but the decode, so its differences are")
  print("the decode's, and the machine's load does not count).")
  print("")
  print("| preset | photo | decode | cold total | cold CPU |")
  print("|---|---|---:|---:|---:|")
  for preset in [Preset.og, .classic] {
    for (file, _) in photos {
      let request = CardRequest(preset: preset, quote: .index(0), picture: .named(file), seed: 1)
      _ = try renderer.render(request)
      var timings: [StageTimings] = []
      var cpu: [Double] = []
      for _ in 0..<runs {
        let start = threadCPUSeconds()
        timings.append(try renderer.render(request).timings)
        cpu.append(threadCPUSeconds() - start)
      }
      print(
        "| \(preset) | \(file) | \(milliseconds(median(timings.map(\.decode)))) | "
          + "\(milliseconds(median(timings.map(\.total)))) | \(milliseconds(median(cpu))) |")
    }
  }
}

/// The CPU time the calling thread has used.
private func threadCPUSeconds() -> Double {
  var time = timespec()
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
  return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// A D65 RGB profile with these primaries and sRGB's tone curve, made with LittleCMS.
private func profile(primaries: [(Double, Double)]) throws -> [UInt8] {
  let parameters: [Double] = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
  guard let curve = cmsBuildParametricToneCurve(nil, 4, parameters) else { fail("no tone curve") }
  defer { cmsFreeToneCurve(curve) }
  var white = cmsCIExyY(x: 0.3127, y: 0.3290, Y: 1)
  var triple = cmsCIExyYTRIPLE(
    Red: cmsCIExyY(x: primaries[0].0, y: primaries[0].1, Y: 1),
    Green: cmsCIExyY(x: primaries[1].0, y: primaries[1].1, Y: 1),
    Blue: cmsCIExyY(x: primaries[2].0, y: primaries[2].1, Y: 1))
  let curves: [OpaquePointer?] = [curve, curve, curve]
  guard let profile = curves.withUnsafeBufferPointer({ cmsCreateRGBProfile(&white, &triple, $0.baseAddress) })
  else { fail("no profile") }
  defer { cmsCloseProfile(profile) }
  var size: cmsUInt32Number = 0
  guard cmsSaveProfileToMem(profile, nil, &size) != 0 else { fail("profile not saved") }
  var bytes = [UInt8](repeating: 0, count: Int(size))
  guard bytes.withUnsafeMutableBytes({ cmsSaveProfileToMem(profile, $0.baseAddress, &size) }) != 0 else {
    fail("profile not saved")
  }
  return bytes
}

/// The JPEG with `profile` in one APP2 ICC_PROFILE segment after SOI.
private func withAPP2(_ jpeg: [UInt8], _ profile: [UInt8]) -> [UInt8] {
  let body = Array("ICC_PROFILE".utf8) + [0, 1, 1] + profile
  return [0xFF, 0xD8, 0xFF, 0xE2, UInt8((body.count + 2) >> 8), UInt8((body.count + 2) & 0xFF)] + body
    + jpeg.dropFirst(2)
}

/// The PNG with an iCCP chunk of `profile` after IHDR.
private func withICCP(_ png: [UInt8], _ profile: [UInt8]) throws -> [UInt8] {
  guard let compressor = libdeflate_alloc_compressor(6) else { fail("no compressor") }
  defer { libdeflate_free_compressor(compressor) }
  var compressed = [UInt8](repeating: 0, count: libdeflate_zlib_compress_bound(compressor, profile.count))
  let written = profile.withUnsafeBytes { source in
    compressed.withUnsafeMutableBytes {
      libdeflate_zlib_compress(compressor, source.baseAddress, source.count, $0.baseAddress, $0.count)
    }
  }
  let data = Array("P3".utf8) + [0, 0] + compressed.prefix(written)
  let typed = Array("iCCP".utf8) + data
  let crc = typed.withUnsafeBytes { libdeflate_crc32(0, $0.baseAddress, $0.count) }
  func be32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
  return Array(png[0..<33]) + be32(data.count) + typed + be32(Int(crc)) + png[33...]
}

/// The JPEG's pixels as an RGB PNG (through Cairo).
private func pngOf(_ jpeg: [UInt8]) throws -> [UInt8] {
  guard let handle = tjInitDecompress() else { fail("no turbojpeg") }
  defer { tjDestroy(handle) }
  var width: Int32 = 0
  var height: Int32 = 0
  var subsampling: Int32 = 0
  var colourspace: Int32 = 0
  _ = jpeg.withUnsafeBufferPointer {
    tjDecompressHeader3(handle, $0.baseAddress, UInt($0.count), &width, &height, &subsampling, &colourspace)
  }
  let stride = Int(cairo_format_stride_for_width(CAIRO_FORMAT_RGB24, width))
  var pixels = [UInt8](repeating: 0, count: stride * Int(height))
  let status = jpeg.withUnsafeBufferPointer { source in
    pixels.withUnsafeMutableBufferPointer {
      tjDecompress2(
        handle, source.baseAddress, UInt(source.count), $0.baseAddress, width, Int32(stride), height,
        Int32(TJPF_BGRX.rawValue), 0)
    }
  }
  guard status == 0 else { fail("the JPEG does not decode") }
  final class Sink { var bytes: [UInt8] = [] }
  let sink = Sink()
  pixels.withUnsafeMutableBufferPointer { buffer in
    let surface = cairo_image_surface_create_for_data(
      buffer.baseAddress, CAIRO_FORMAT_RGB24, width, height, Int32(stride))
    defer { cairo_surface_destroy(surface) }
    cairo_surface_write_to_png_stream(
      surface,
      { closure, data, length in
        let sink = Unmanaged<Sink>.fromOpaque(closure!).takeUnretainedValue()
        sink.bytes += UnsafeBufferPointer(start: data, count: Int(length))
        return CAIRO_STATUS_SUCCESS
      }, Unmanaged.passUnretained(sink).toOpaque())
  }
  return withExtendedLifetime(sink) { sink.bytes }
}
