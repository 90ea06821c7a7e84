import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where a card goes: stdout, or a file written atomically (a temporary file in the same folder,
/// flushed to disk, then renamed: ``AtomicFile``), so a failure never leaves a partial or clobbered file.
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
    do throws(AtomicFile.Failure) {
      if path == "-" {
        try AtomicFile.writeAll(bytes, to: STDOUT_FILENO)
      } else {
        // Keep the mode of the file it replaces; a new file gets 0666 less the umask.
        var existing = stat()
        let mode = stat(path, &existing) == 0 ? existing.st_mode & 0o7777 : AtomicFile.defaultMode
        try AtomicFile.write(bytes, to: path, mode: mode)
      }
    } catch {
      throw CommandLineError.cannotWrite("cannot write '\(path == "-" ? "stdout" : path)': \(error.reason)")
    }
  }
}
