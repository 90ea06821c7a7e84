import Foundation

#if canImport(Glibc)
  import Glibc
  private let systemWrite = Glibc.write
#elseif canImport(Darwin)
  import Darwin
  private let systemWrite = Darwin.write
#endif

/// Whole-or-nothing file writes: a temporary file in the same folder, every byte written, the
/// mode set, flushed to disk, then renamed over the final name. On any failure the temporary file
/// is removed and the final name is untouched. Used by `render` and by `batch`.
enum AtomicFile {
  /// Why a write failed, in the system's words (strerror).
  struct Failure: Error {
    let reason: String

    static func fromErrno() -> Failure { Failure(reason: String(cString: strerror(errno))) }
  }

  /// The permission bits a new file gets: 0666 less the process's umask.
  static let defaultMode: mode_t = {
    let mask = umask(0o022)
    umask(mask)
    return 0o666 & ~mask
  }()

  /// Writes `bytes` to `path` atomically with permission bits `mode`.
  static func write(_ bytes: [UInt8], to path: String, mode: mode_t) throws(Failure) {
    let folder = (path as NSString).deletingLastPathComponent
    let name = (path as NSString).lastPathComponent
    var template = Array(((folder.isEmpty ? "." : folder) + "/.\(name).tmp-XXXXXX").utf8CString)
    let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    guard descriptor >= 0 else { throw .fromErrno() }
    let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    do throws(Failure) {
      try writeAll(bytes, to: descriptor)
      guard fchmod(descriptor, mode) == 0, fsync(descriptor) == 0 else { throw .fromErrno() }
    } catch {
      close(descriptor)
      unlink(temporary)
      throw error
    }
    guard close(descriptor) == 0, rename(temporary, path) == 0 else {
      let error = Failure.fromErrno()
      unlink(temporary)
      throw error
    }
  }

  /// Writes every byte to an open descriptor, retrying short writes and EINTR.
  static func writeAll(_ bytes: [UInt8], to descriptor: Int32) throws(Failure) {
    var offset = 0
    while offset < bytes.count {
      let written = bytes.withUnsafeBytes { systemWrite(descriptor, $0.baseAddress! + offset, bytes.count - offset) }
      if written < 0 && errno == EINTR { continue }
      guard written > 0 else { throw .fromErrno() }
      offset += written
    }
  }
}
