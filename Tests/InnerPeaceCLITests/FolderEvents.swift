import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A folder's changes as the kernel reports them (inotify), so a test waits for a file that a
/// child process writes without polling or sleeping.
final class FolderEvents {
  private let descriptor: Int32

  /// Watches `folder` for files created, closed after writing, or renamed into it.
  init(_ folder: URL) throws {
    descriptor = inotify_init1(Int32(IN_CLOEXEC))
    guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    let mask = UInt32(IN_CREATE) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO)
    guard inotify_add_watch(descriptor, folder.path, mask) >= 0 else {
      let code = errno
      close(descriptor)
      throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
    }
  }

  deinit { close(descriptor) }

  /// Checks `condition` now and again after each change in the folder, until it holds. Returns
  /// false if the folder stays still for `hangGuardSeconds`: a guard against a hung test, never the
  /// thing a test asserts about time.
  func wait(until condition: () -> Bool, hangGuardSeconds: Int32 = 300) -> Bool {
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while !condition() {
      var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
      guard poll(&request, 1, hangGuardSeconds * 1000) > 0 else { return false }
      guard read(descriptor, &buffer, buffer.count) > 0 else { return false }
    }
    return true
  }
}
