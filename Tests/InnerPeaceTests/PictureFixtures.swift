import CInnerPeace
import Foundation
import InnerPeace

/// Hostile and unusual photos, made in the test from scratch (turbojpeg, libdeflate) and then
/// edited byte by byte, so no large binary lives in the repository.
enum PictureFixtures {
  struct Failure: Error, CustomStringConvertible {
    let description: String
  }

  // MARK: JPEG

  /// Encodes `pixels` (`channels` bytes a pixel: 1 grey, 3 RGB, 4 CMYK) as a baseline JPEG
  /// (progressive when `progressive`).
  static func jpeg(
    width: Int, height: Int, channels: Int, pixels: [UInt8], quality: Int32 = 95, subsampling: TJSAMP = TJSAMP_444,
    progressive: Bool = false
  ) throws -> [UInt8] {
    let format: TJPF
    switch channels {
    case 1: format = TJPF_GRAY
    case 3: format = TJPF_RGB
    case 4: format = TJPF_CMYK
    default: throw Failure(description: "no JPEG pixel format with \(channels) channels")
    }
    guard let handle = tjInitCompress() else { throw Failure(description: "turbojpeg could not start") }
    defer { tjDestroy(handle) }
    var buffer: UnsafeMutablePointer<UInt8>?
    var size: UInt = 0
    let status = pixels.withUnsafeBufferPointer {
      tjCompress2(
        handle, $0.baseAddress, Int32(width), Int32(width * channels), Int32(height), Int32(format.rawValue), &buffer,
        &size, Int32(channels == 1 ? TJSAMP_GRAY.rawValue : subsampling.rawValue), quality,
        progressive ? TJFLAG_PROGRESSIVE : 0)
    }
    defer { tjFree(buffer) }
    guard status == 0, let buffer else { throw Failure(description: String(cString: tjGetErrorStr2(handle))) }
    return Array(UnsafeBufferPointer(start: buffer, count: Int(size)))
  }

  /// A white RGB JPEG with black rectangles (x range, y range), for finding where pixels went.
  static func markedJPEG(width: Int, height: Int, black: [(Range<Int>, Range<Int>)]) throws -> [UInt8] {
    var pixels = [UInt8](repeating: 255, count: width * height * 3)
    for (xs, ys) in black {
      for y in ys { for x in xs { for c in 0..<3 { pixels[3 * (y * width + x) + c] = 0 } } }
    }
    return try jpeg(width: width, height: height, channels: 3, pixels: pixels)
  }

  /// A JPEG of noise, so that cutting it anywhere cuts real image data.
  static func noiseJPEG(width: Int, height: Int, seed: UInt64 = 7) throws -> [UInt8] {
    try jpeg(width: width, height: height, channels: 3, pixels: noise(count: width * height * 3, seed: seed))
  }

  static func noise(count: Int, seed: UInt64) -> [UInt8] {
    var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    return (0..<count).map { _ in
      state ^= state << 13
      state ^= state >> 7
      state ^= state << 17
      return UInt8(truncatingIfNeeded: state >> 24)
    }
  }

  /// The offsets of a JPEG's marker segments before its first scan: (marker, offset of 0xFF).
  static func segments(_ jpeg: [UInt8]) -> [(marker: UInt8, offset: Int)] {
    var result: [(UInt8, Int)] = []
    var offset = 2
    while offset + 4 <= jpeg.count, jpeg[offset] == 0xFF {
      let marker = jpeg[offset + 1]
      result.append((marker, offset))
      if marker == 0xDA { break }
      offset += 2 + (Int(jpeg[offset + 2]) << 8 | Int(jpeg[offset + 3]))
    }
    return result
  }

  /// The same JPEG with its frame header (SOF) claiming another size.
  static func claimingSize(_ jpeg: [UInt8], width: Int, height: Int) throws -> [UInt8] {
    guard let sof = segments(jpeg).first(where: { (0xC0...0xC2).contains($0.marker) }) else {
      throw Failure(description: "no SOF segment")
    }
    var bytes = jpeg
    bytes[sof.offset + 5] = UInt8(height >> 8)
    bytes[sof.offset + 6] = UInt8(height & 0xFF)
    bytes[sof.offset + 7] = UInt8(width >> 8)
    bytes[sof.offset + 8] = UInt8(width & 0xFF)
    return bytes
  }

  /// A TIFF structure (as in an Exif APP1 or a PNG eXIf chunk) whose first IFD holds one
  /// Orientation entry.
  static func tiffWithOrientation(_ orientation: UInt16, bigEndian: Bool) -> [UInt8] {
    func u16(_ value: UInt16) -> [UInt8] {
      bigEndian ? [UInt8(value >> 8), UInt8(value & 0xFF)] : [UInt8(value & 0xFF), UInt8(value >> 8)]
    }
    func u32(_ value: UInt32) -> [UInt8] {
      let bytes = (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
      return bigEndian ? bytes.reversed() : bytes
    }
    var tiff: [UInt8] = bigEndian ? Array("MM".utf8) : Array("II".utf8)
    tiff += u16(42) + u32(8)
    // Two entries, Orientation second, as cameras write them (after Make).
    tiff += u16(2)
    tiff += u16(0x010F) + u16(2) + u32(4) + Array("Cam\0".utf8)
    tiff += u16(0x0112) + u16(3) + u32(1) + u16(orientation) + u16(0)
    tiff += u32(0)
    return tiff
  }

  /// The same JPEG with an APP1 Exif segment carrying `payload` (a TIFF structure), right after SOI.
  static func withExif(_ jpeg: [UInt8], tiff payload: [UInt8]) -> [UInt8] {
    let body = Array("Exif".utf8) + [0, 0] + payload
    let length = body.count + 2
    return [0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + body + jpeg.dropFirst(2)
  }

  // MARK: PNG

  /// A PNG written sample by sample: any colour type and bit depth, optionally Adam7-interlaced.
  /// `sample(x, y)` gives the pixel's samples (one per channel; a palette index for type 3).
  static func png(
    width: Int, height: Int, colourType: UInt8, bitDepth: Int, interlaced: Bool = false,
    palette: [UInt8]? = nil, transparency: [UInt8]? = nil, extraChunks: [(String, [UInt8])] = [],
    sample: (Int, Int) -> [Int]
  ) throws -> [UInt8] {
    let channels = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][Int(colourType)]!
    func packRow(_ xs: [Int], _ y: Int) -> [UInt8] {
      var row: [UInt8] = [0]
      if bitDepth >= 8 {
        for x in xs {
          for value in sample(x, y) {
            if bitDepth == 16 { row += [UInt8(value >> 8), UInt8(value & 0xFF)] } else { row.append(UInt8(value)) }
          }
        }
      } else {
        var bits = 0
        var current = 0
        for x in xs {
          current = current << bitDepth | sample(x, y)[0]
          bits += bitDepth
          if bits == 8 {
            row.append(UInt8(current))
            bits = 0
            current = 0
          }
        }
        if bits > 0 { row.append(UInt8(current << (8 - bits))) }
      }
      precondition(bitDepth < 8 || row.count == 1 + xs.count * channels * bitDepth / 8)
      return row
    }
    var raw: [UInt8] = []
    if interlaced {
      let passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
      for (x0, y0, dx, dy) in passes {
        let xs = Array(stride(from: x0, to: width, by: dx))
        let ys = Array(stride(from: y0, to: height, by: dy))
        guard !xs.isEmpty, !ys.isEmpty else { continue }
        for y in ys { raw += packRow(xs, y) }
      }
    } else {
      for y in 0..<height { raw += packRow(Array(0..<width), y) }
    }
    var ihdr = be32(width) + be32(height)
    ihdr += [UInt8(bitDepth), colourType, 0, 0, interlaced ? 1 : 0]
    var chunks: [(String, [UInt8])] = [("IHDR", ihdr)]
    chunks += extraChunks
    if let palette { chunks.append(("PLTE", palette)) }
    if let transparency { chunks.append(("tRNS", transparency)) }
    chunks.append(("IDAT", try zlib(raw)))
    chunks.append(("IEND", []))
    return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunks.flatMap { chunk($0.0, $0.1) }
  }

  static func be32(_ value: Int) -> [UInt8] {
    [
      UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
      UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value),
    ]
  }

  static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
    let typed = Array(type.utf8) + data
    let crc = typed.withUnsafeBytes { libdeflate_crc32(0, $0.baseAddress, $0.count) }
    return be32(data.count) + typed + be32(Int(crc))
  }

  static func zlib(_ bytes: [UInt8]) throws -> [UInt8] {
    guard let compressor = libdeflate_alloc_compressor(6) else { throw Failure(description: "no compressor") }
    defer { libdeflate_free_compressor(compressor) }
    let bound = libdeflate_zlib_compress_bound(compressor, bytes.count)
    var out = [UInt8](repeating: 0, count: bound)
    let written = bytes.withUnsafeBytes { source in
      out.withUnsafeMutableBytes {
        libdeflate_zlib_compress(compressor, source.baseAddress, source.count, $0.baseAddress, bound)
      }
    }
    guard written > 0 else { throw Failure(description: "compression failed") }
    return Array(out.prefix(written))
  }

  /// The chunks of a PNG: (type, offset of the length field, data length).
  static func pngChunks(_ png: [UInt8]) -> [(type: String, offset: Int, length: Int)] {
    var result: [(String, Int, Int)] = []
    var offset = 8
    while offset + 12 <= png.count {
      let length = png[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
      let type = String(decoding: png[offset + 4..<offset + 8], as: UTF8.self)
      result.append((type, offset, length))
      offset += 12 + length
    }
    return result
  }

  /// The same PNG with its IHDR claiming another size (and a correct CRC).
  static func claimingSize(png: [UInt8], width: Int, height: Int) -> [UInt8] {
    var ihdr = Array(png[16..<29])
    ihdr.replaceSubrange(0..<8, with: be32(width) + be32(height))
    return Array(png[0..<8]) + chunk("IHDR", ihdr) + png[33...]
  }

  /// A grey PNG of one flat value, any size, written without holding the image twice.
  static func flatGreyPNG(width: Int, height: Int, grey: UInt8, interlaced: Bool = false) throws -> [UInt8] {
    if interlaced {
      return try png(width: width, height: height, colourType: 0, bitDepth: 8, interlaced: true) { _, _ in [Int(grey)] }
    }
    var raw = [UInt8](repeating: grey, count: (width + 1) * height)
    for y in 0..<height { raw[y * (width + 1)] = 0 }
    let ihdr = be32(width) + be32(height) + [8, 0, 0, 0, 0]
    return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", ihdr) + chunk("IDAT", try zlib(raw))
      + chunk("IEND", [])
  }
}
