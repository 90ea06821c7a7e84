import Foundation

#if canImport(Glibc)
  import Glibc
  private let systemWrite = Glibc.write
#elseif canImport(Darwin)
  import Darwin
  private let systemWrite = Darwin.write
#endif

/// Where a card goes: stdout, or a file written atomically (a temporary file in the same folder,
/// flushed to disk, then renamed), so a failure never leaves a partial or clobbered file.
struct OutputTarget {
  let path: String

  /// Checks, before any rendering, that the output can be written.
  init(path: String) throws {
    self.path = path
    guard path != "-" else { return }
    guard !path.isEmpty else { throw CommandLineError.usage("--out is empty") }
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
      throw CommandLineError.cannotWrite("cannot write '\(path)': it is a directory")
    }
    let folder = directory
    guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) else {
      throw CommandLineError.cannotWrite("cannot write '\(path)': the folder '\(folder)' does not exist")
    }
    guard isDirectory.boolValue else {
      throw CommandLineError.cannotWrite("cannot write '\(path)': '\(folder)' is a file, not a folder")
    }
    guard access(folder, W_OK) == 0 else {
      throw CommandLineError.cannotWrite("cannot write '\(path)': \(String(cString: strerror(errno)))")
    }
  }

  private var directory: String {
    let folder = (path as NSString).deletingLastPathComponent
    return folder.isEmpty ? "." : folder
  }

  func write(_ bytes: [UInt8]) throws {
    if path == "-" {
      try writeAll(bytes, to: STDOUT_FILENO, name: "stdout")
      return
    }
    var template = Array((directory + "/.\((path as NSString).lastPathComponent).XXXXXX").utf8CString)
    let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    guard descriptor >= 0 else {
      throw CommandLineError.cannotWrite("cannot write '\(path)': \(String(cString: strerror(errno)))")
    }
    let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    func failure() -> CommandLineError {
      CommandLineError.cannotWrite("cannot write '\(path)': \(String(cString: strerror(errno)))")
    }
    do {
      try writeAll(bytes, to: descriptor, name: path)
      // The mode a new file would get (0666 less the umask), or the mode of the file it replaces.
      var existing = stat()
      let mode = stat(path, &existing) == 0 ? existing.st_mode & 0o7777 : 0o666 & ~Self.umaskValue
      guard fchmod(descriptor, mode) == 0, fsync(descriptor) == 0 else { throw failure() }
    } catch {
      close(descriptor)
      unlink(temporary)
      throw error
    }
    guard close(descriptor) == 0 else {
      let error = failure()
      unlink(temporary)
      throw error
    }
    guard rename(temporary, path) == 0 else {
      let error = failure()
      unlink(temporary)
      throw error
    }
  }

  /// The process's umask (read by setting and restoring it; the CLI is single-threaded here).
  private static var umaskValue: mode_t {
    let mask = umask(0o022)
    umask(mask)
    return mask
  }

  private func writeAll(_ bytes: [UInt8], to descriptor: Int32, name: String) throws {
    var offset = 0
    while offset < bytes.count {
      let written = bytes.withUnsafeBytes { systemWrite(descriptor, $0.baseAddress! + offset, bytes.count - offset) }
      if written < 0 {
        if errno == EINTR { continue }
        throw CommandLineError.cannotWrite("cannot write '\(name)': \(String(cString: strerror(errno)))")
      }
      offset += written
    }
  }
}
