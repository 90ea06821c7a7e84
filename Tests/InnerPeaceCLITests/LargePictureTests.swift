import Foundation
import Testing

/// A large PNG photo is decoded row by row into the reduced size a card needs, never into a
/// full-size buffer: measured as the peak resident memory of the `innerpeace render` process.
@Suite("Large pictures", .tags(.process, .binary))
struct LargePictureTests {
  /// A flat grey 8-bit PNG, its image data in stored (uncompressed) deflate blocks, so it needs
  /// no compressor: the file is about `width * height` bytes.
  static func storedGreyPNG(width: Int, height: Int, grey: UInt8) -> [UInt8] {
    func be32(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
    let table: [UInt32] = (0..<256).map { (byte: UInt32) in
      (0..<8).reduce(byte) { crc, _ in crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
      var crc: UInt32 = 0xFFFF_FFFF
      table.withUnsafeBufferPointer { table in
        bytes.withUnsafeBufferPointer { bytes in
          for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        }
      }
      return ~crc
    }
    func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
      let typed = Array(type.utf8) + data
      return be32(UInt32(data.count)) + typed + be32(crc32(typed[...]))
    }
    var raw = [UInt8](repeating: grey, count: (width + 1) * height)
    for row in 0..<height { raw[row * (width + 1)] = 0 }
    // Adler-32 of the raw rows, in blocks short enough not to overflow before the modulo.
    var a: UInt32 = 1
    var b: UInt32 = 0
    raw.withUnsafeBufferPointer { buffer in
      var index = 0
      while index < buffer.count {
        let end = min(index + 5552, buffer.count)
        for position in index..<end {
          a += UInt32(buffer[position])
          b += a
        }
        a %= 65521
        b %= 65521
        index = end
      }
    }
    var zlib: [UInt8] = [0x78, 0x01]
    zlib.reserveCapacity(raw.count + raw.count / 65535 * 5 + 16)
    var offset = 0
    while offset < raw.count {
      let length = min(65535, raw.count - offset)
      let final: UInt8 = offset + length == raw.count ? 1 : 0
      zlib += [final, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
      zlib += raw[offset..<offset + length]
      offset += length
    }
    zlib += be32(b << 16 | a)
    let ihdr = be32(UInt32(width)) + be32(UInt32(height)) + [8, 0, 0, 0, 0]
    // Image data in IDAT chunks of 1 MiB (PNG allows any number of them).
    var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", ihdr)
    var start = 0
    while start < zlib.count {
      let end = min(start + (1 << 20), zlib.count)
      png += chunk("IDAT", Array(zlib[start..<end]))
      start = end
    }
    return png + chunk("IEND", [])
  }

  /// Runs the binary under GNU time and returns its exit status and peak resident memory in
  /// bytes, once it has exited. time forks the binary from its own small process and reports the
  /// child's `ru_maxrss`; this test process cannot take it from wait4 itself, since a child it
  /// spawns shares its memory until it execs and the kernel counts that in the child's peak.
  static func runMeasured(_ arguments: [String], reportIn folder: URL) throws -> (status: Int32, peakBytes: Int) {
    guard let binary = innerpeaceBinary else { throw CLI.Missing() }
    let time = "/usr/bin/time"
    try #require(
      FileManager.default.isExecutableFile(atPath: time), "no GNU time: bash scripts/install-deps.sh --with-test-tools")
    let report = folder.appendingPathComponent("time-report")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: time)
    process.arguments = ["--format", "%M", "--output", report.path, binary.path] + arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    // The last line is the peak in kilobytes (a line before it may say how the command exited).
    let text = try String(contentsOf: report, encoding: .utf8)
    let kilobytes = try #require(
      text.split(separator: "\n").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }, "\(text)")
    return (process.terminationStatus, kilobytes * 1024)
  }

  @Test func largePNGIsNeverDecodedAtFullSize() throws {
    try withTemporaryFolder { folder in
      let catalog = folder.appendingPathComponent("catalog", isDirectory: true)
      try FileManager.default.createDirectory(at: catalog, withIntermediateDirectories: true)
      try Data(#"[{"text": "Calm", "author": ""}]"#.utf8).write(to: catalog.appendingPathComponent("quotes.json"))
      try Data(#"["big.png"]"#.utf8).write(to: catalog.appendingPathComponent("pictures.json"))
      // 6700 x 6700 = 44.9 megapixels, under the 50 MP limit: 180 MB as full-size pixels.
      try Data(Self.storedGreyPNG(width: 6700, height: 6700, grey: 120))
        .write(to: catalog.appendingPathComponent("big.png"))
      let out = folder.appendingPathComponent("card.png")
      let run = try Self.runMeasured(
        [
          "render", "--catalog", catalog.path, "--picture", "big.png", "--preset", "og", "--seed", "1", "--out",
          out.path,
        ], reportIn: folder)
      #expect(run.status == 0)
      let megabytes = run.peakBytes >> 20
      // The file itself is 45 MB here (stored, uncompressed); a full-size decode adds 180 MB and
      // Cairo's copy as much again.
      #expect(megabytes < 200, "peak resident memory \(megabytes) MB for a 45 MP PNG on an og card")
    }
  }
}
