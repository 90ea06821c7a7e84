import Foundation
import InnerPeace

#if canImport(Glibc)
  import Glibc
  private let systemRead = Glibc.read
#elseif canImport(Darwin)
  import Darwin
  private let systemRead = Darwin.read
#endif

/// A quote's text read from stdin (`--text -`) or a file (`--text-file PATH`): at most the bytes
/// `--text` may hold (``InnerPeace/Limits/maximumTextBytes``, and a line break or two more),
/// valid UTF-8, with its trailing line breaks taken off (what `echo` and editors add); the core
/// then checks it as it checks `--text`.
enum TextInput {
  /// The text at `path` (`-` is stdin), for the message naming `option`.
  /// - Throws: ``CommandLineError``: a file that cannot be read (exit status 66, in the system's
  ///   words), one over the limit (64), or bytes that are not UTF-8 (65).
  static func read(_ path: String, option: String) throws(CommandLineError) -> String {
    let source = path == "-" ? "\(option) -: stdin" : "\(option) '\(path)'"
    let descriptor = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else {
      throw CommandLineError(
        description: "cannot read \(source): \(String(cString: strerror(errno)))", exitCode: ExitStatus.noInput)
    }
    defer { if descriptor != STDIN_FILENO { close(descriptor) } }
    // Room for the longest text, a CR LF, and one byte more to tell that there is more.
    let limit = Limits.maximumTextBytes + 2
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while bytes.count <= limit {
      let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count >= 0 else {
        throw CommandLineError(
          description: "cannot read \(source): \(String(cString: strerror(errno)))", exitCode: ExitStatus.noInput)
      }
      if count == 0 { break }
      bytes += chunk[..<count]
    }
    guard bytes.count <= limit else {
      throw CommandLineError.usage(
        "\(source) holds over \(Limits.maximumTextBytes) bytes; a quote is at most "
          + "\(Limits.maximumTextCharacters) characters (and \(Limits.maximumTextBytes) bytes)")
    }
    while let last = bytes.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { bytes.removeLast() }
    guard let text = String(validating: bytes, as: UTF8.self) else {
      throw CommandLineError(description: "\(source) is not valid UTF-8", exitCode: ExitStatus.dataError)
    }
    return text
  }
}
