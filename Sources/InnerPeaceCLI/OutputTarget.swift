import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where a card (or a calendar) goes: stdout, or a path, written without ever clobbering what the
/// path names.
///
/// - A regular file (or a new name) is written atomically (``AtomicFile``: a temporary file in the
///   same folder, flushed to disk, then renamed), so a failure never leaves a partial file.
/// - A symbolic link is followed: its target is written atomically, beside the target, and the
///   link stays a link.
/// - A device, FIFO or socket (`/dev/null`, `/dev/stdout`, a named pipe) is written in place, as
///   a shell's `>` does: opened for writing, never created, truncated or replaced.
struct OutputTarget {
  let path: String
  private let destination: Destination

  private enum Destination {
    case standardOutput
    /// A regular file or a new name, the path with its symbolic links followed.
    case file(String)
    /// A device, FIFO or socket, written in place.
    case special(String)
  }

  /// Checks, before any rendering, that the output can be written.
  /// - Parameter option: the option that names the path, for the message when it is empty.
  init(path: String, option: String = "--out") throws {
    self.path = path
    guard path != "-" else {
      destination = .standardOutput
      return
    }
    guard !path.isEmpty else { throw CommandLineError.usage("\(option) is empty") }
    let resolved = try Self.followingLinks(path)
    var info = stat()
    if lstat(resolved, &info) == 0 {
      switch info.st_mode & S_IFMT {
      case S_IFDIR: throw CommandLineError.cannotWrite("cannot write '\(path)': it is a directory")
      case S_IFREG: destination = .file(resolved)
      default:
        destination = .special(resolved)
        return
      }
    } else {
      destination = .file(resolved)
    }
    let folder = Self.directory(of: resolved)
    var isDirectory: ObjCBool = false
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

  private static func directory(of path: String) -> String {
    let folder = (path as NSString).deletingLastPathComponent
    return folder.isEmpty ? "." : folder
  }

  /// The path with the symbolic links of its last component followed (a link to a link too), so
  /// that the file written is the link's target; the folders on the way resolve as usual.
  private static func followingLinks(_ path: String) throws -> String {
    var current = path
    for _ in 0..<40 {
      var info = stat()
      guard lstat(current, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return current }
      var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      let length = readlink(current, &buffer, buffer.count - 1)
      guard length > 0 else {
        throw CommandLineError.cannotWrite("cannot write '\(path)': \(String(cString: strerror(errno)))")
      }
      let target = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
      current = target.hasPrefix("/") ? target : directory(of: current) + "/" + target
    }
    throw CommandLineError.cannotWrite("cannot write '\(path)': \(String(cString: strerror(ELOOP)))")
  }

  /// Whether this and `other` name the same file (after following links), so that writing both
  /// would leave only the last.
  func isSameFile(as other: OutputTarget) -> Bool {
    switch (destination, other.destination) {
    case (.standardOutput, .standardOutput): return true
    case (.file(let one), .file(let two)):
      var first = stat()
      var second = stat()
      if stat(one, &first) == 0, stat(two, &second) == 0 {
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino
      }
      return (one as NSString).standardizingPath == (two as NSString).standardizingPath
    default: return false
    }
  }

  /// Writes the bytes. A failure on stdout is a ``StandardStreams/Failure`` (exit status 74).
  func write(_ bytes: [UInt8]) throws {
    if case .standardOutput = destination { return try StandardStreams.writeOutput(bytes) }
    do throws(AtomicFile.Failure) {
      switch destination {
      case .standardOutput:
        break
      case .file(let resolved):
        // Keep the mode of the file it replaces; a new file gets 0666 less the umask.
        var existing = stat()
        let mode = stat(resolved, &existing) == 0 ? existing.st_mode & 0o7777 : AtomicFile.defaultMode
        try AtomicFile.write(bytes, to: resolved, mode: mode)
      case .special(let resolved):
        // As a shell's `>` would, but without O_CREAT or O_TRUNC: the node is never replaced.
        let descriptor = open(resolved, O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw AtomicFile.Failure.fromErrno() }
        defer { close(descriptor) }
        try AtomicFile.writeAll(bytes, to: descriptor)
      }
    } catch {
      throw CommandLineError.cannotWrite("cannot write '\(path)': \(error.reason)")
    }
  }
}
