#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Reads catalog photos safely: only regular files (a FIFO would block forever, a device never
/// end), and none over ``Limits/maximumPictureBytes``.
enum PictureFile {
  /// The bytes of the photo at `path`. Opened without blocking, checked with `fstat` on the
  /// open descriptor (so a file swapped in between cannot slip past), read to its end.
  /// - Throws: ``InnerPeaceError/pictureMissing(name:)`` if there is no such file, or
  ///   ``InnerPeaceError/pictureUndecodable(name:reason:)`` if it is not a regular file, is too
  ///   large or cannot be read.
  static func read(atPath path: String, name: String) throws(InnerPeaceError) -> [UInt8] {
    let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    guard descriptor >= 0 else {
      let code = errno
      if code == ENOENT || code == ENOTDIR { throw .pictureMissing(name: name) }
      throw .pictureUndecodable(
        name: name, reason: "cannot be opened: \(String(cString: strerror(code)))")
    }
    defer { close(descriptor) }
    var status = stat()
    guard fstat(descriptor, &status) == 0 else {
      throw .pictureUndecodable(
        name: name, reason: "cannot be read: \(String(cString: strerror(errno)))")
    }
    guard status.st_mode & S_IFMT == S_IFREG else {
      throw .pictureUndecodable(name: name, reason: "not a regular file (a folder, FIFO or device)")
    }
    let limit = Limits.maximumPictureBytes
    guard status.st_size <= limit else {
      throw .pictureUndecodable(
        name: name, reason: "the file is over the limit of \(limit >> 20) MiB")
    }
    // One byte more than the size fstat gave, to notice a file that grew past the limit.
    let capacity = min(Int(status.st_size), limit) + 1
    var failure: Int32 = 0
    let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
      count = 0
      while count < capacity {
        let got = readBytes(descriptor, buffer.baseAddress! + count, capacity - count)
        if got > 0 {
          count += got
        } else if got == 0 {
          break
        } else if errno != EINTR {
          failure = errno
          break
        }
      }
    }
    if failure != 0 {
      throw .pictureUndecodable(
        name: name, reason: "cannot be read: \(String(cString: strerror(failure)))")
    }
    guard bytes.count < capacity else {
      throw .pictureUndecodable(name: name, reason: "the file changed while it was read")
    }
    return bytes
  }
}

private func readBytes(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
  #if canImport(Glibc)
    Glibc.read(descriptor, buffer, count)
  #else
    Darwin.read(descriptor, buffer, count)
  #endif
}
