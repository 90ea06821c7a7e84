import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A large PNG photo is decoded row by row into the reduced size a card needs, never into a
/// full-size buffer: measured as the peak resident memory of the `innerpeace render` process.
@Suite("Large pictures")
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

  /// Runs the binary and returns its exit status, peak resident memory in bytes and run time.
  static func runMeasured(_ arguments: [String]) throws -> (status: Int32, peakBytes: Int, seconds: Double) {
    guard let binary = innerpeaceBinary else { throw CLI.Missing() }
    let argv = ([binary.path] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    var pid: pid_t = 0
    let started = Date()
    let spawned = posix_spawn(&pid, binary.path, &actions, nil, argv, environ)
    guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }
    // The child's own high-water mark (VmHWM), read from /proc while it runs: it only grows, so
    // the last reading holds the decode's peak. (wait4's ru_maxrss would also count this test
    // process, whose memory the spawned child shares until it execs.)
    var status: Int32 = 0
    var peak = 0
    while true {
      if let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
      {
        peak = max(peak, kilobytes * 1024)
      }
      let done = waitpid(pid, &status, WNOHANG)
      if done == pid || (done < 0 && errno != EINTR) { break }
      usleep(2_000)
    }
    let exit = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : -1
    return (exit, peak, Date().timeIntervalSince(started))
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
      let run = try Self.runMeasured([
        "render", "--catalog", catalog.path, "--picture", "big.png", "--preset", "og", "--seed", "1", "--out", out.path,
      ])
      #expect(run.status == 0)
      let megabytes = run.peakBytes >> 20
      // The file itself is 45 MB here (stored, uncompressed); a full-size decode adds 180 MB and
      // Cairo's copy as much again.
      #expect(megabytes < 200, "peak resident memory \(megabytes) MB for a 45 MP PNG on an og card")
      #expect(run.seconds < 30, "took \(run.seconds) s")
    }
  }
}
