import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The one way the command line writes to stdout and stderr.
///
/// Foundation's `FileHandle.write` traps when a write fails and `print` drops the failure
/// silently, so a full disk (`ENOSPC`), a closed stream (`EBADF`) or a reader gone (`EPIPE`) either
/// killed a command with SIGILL or let it exit 0 having written nothing. Here every write is a
/// plain `write(2)` of every byte: a failure on stdout is thrown (the command ends with
/// ``ExitStatus/ioError``, its message on stderr), and a failure on stderr is remembered, the rest
/// of stderr's lines dropped, and the command ends with ``ExitStatus/ioError`` once its work is
/// done (a card already written stays intact). SIGPIPE is ignored (``ignoreBrokenPipes()``), so a
/// reader gone is `EPIPE`, an error, not a kill.
enum StandardStreams {
  /// Why stdout could not be written, in the system's words.
  struct Failure: Error, CustomStringConvertible {
    let reason: String

    var description: String { "cannot write to stdout: \(reason)" }
  }

  private static let errorStreamBroken = Atomic(false)

  /// Makes a write to a pipe whose reader is gone fail with `EPIPE` instead of killing the process.
  static func ignoreBrokenPipes() { signal(SIGPIPE, SIG_IGN) }

  /// Holds the place of a standard stream the process was started without (`2>&-`): `/dev/null`
  /// opened read-only, so that writes to it still fail (`EBADF`) as on a closed stream, while no
  /// file the command opens (a card, a journal, a worker's socket) can take descriptor 1 or 2
  /// and receive what was meant for stdout or stderr.
  static func reserveClosedStreams() {
    for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where fcntl(descriptor, F_GETFD) < 0 {
      let placeholder = open("/dev/null", O_RDONLY)
      if placeholder >= 0 && placeholder != descriptor {
        dup2(placeholder, descriptor)
        close(placeholder)
      }
    }
  }

  /// Writes every byte to stdout.
  static func writeOutput(_ bytes: [UInt8]) throws(Failure) {
    do throws(AtomicFile.Failure) {
      try AtomicFile.writeAll(bytes, to: STDOUT_FILENO)
    } catch {
      throw Failure(reason: error.reason)
    }
  }

  /// Writes text to stdout.
  static func writeOutput(_ text: String) throws(Failure) { try writeOutput(Array(text.utf8)) }

  /// Writes text to stderr; if it cannot be written, it is dropped, later text too, and
  /// ``errorStreamFailed`` says so.
  static func writeError(_ text: String) {
    guard !errorStreamBroken.load(ordering: .relaxed) else { return }
    do throws(AtomicFile.Failure) {
      try AtomicFile.writeAll(Array(text.utf8), to: STDERR_FILENO)
    } catch {
      errorStreamBroken.store(true, ordering: .relaxed)
    }
  }

  /// Whether a write to stderr has failed.
  static var errorStreamFailed: Bool { errorStreamBroken.load(ordering: .relaxed) }
}

/// Writes a line to stderr (``StandardStreams/writeError(_:)``).
func warn(_ line: String) {
  StandardStreams.writeError(line + "\n")
}
