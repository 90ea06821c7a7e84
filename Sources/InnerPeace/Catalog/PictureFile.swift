#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What a photo's file was when it was read: enough to notice, cheaply, that it is another file
/// or has been written since (its device, inode, size and modification time), and when its
/// status last changed.
struct PictureStamp: Equatable, Sendable {
  let device: UInt64
  let inode: UInt64
  let size: Int64
  let modifiedSeconds: Int64
  let modifiedNanoseconds: Int64
  /// The status change time (`st_ctim`), in nanoseconds since 1970: any write, rename onto the
  /// name or change of owner or mode sets it to the time of the change.
  let changedNanoseconds: Int64

  /// Whether the file is the one `other` describes, unwritten since (the change time aside).
  func isSameFile(as other: PictureStamp) -> Bool {
    device == other.device && inode == other.inode && size == other.size && modifiedSeconds == other.modifiedSeconds
      && modifiedNanoseconds == other.modifiedNanoseconds
  }

  init(_ status: stat) {
    device = UInt64(status.st_dev)
    inode = UInt64(status.st_ino)
    size = Int64(status.st_size)
    #if canImport(Glibc)
      modifiedSeconds = Int64(status.st_mtim.tv_sec)
      modifiedNanoseconds = Int64(status.st_mtim.tv_nsec)
      changedNanoseconds = Int64(status.st_ctim.tv_sec) * 1_000_000_000 + Int64(status.st_ctim.tv_nsec)
    #else
      modifiedSeconds = Int64(status.st_mtimespec.tv_sec)
      modifiedNanoseconds = Int64(status.st_mtimespec.tv_nsec)
      changedNanoseconds = Int64(status.st_ctimespec.tv_sec) * 1_000_000_000 + Int64(status.st_ctimespec.tv_nsec)
    #endif
  }
}

/// Reads catalog photos safely: only regular files (a FIFO would block forever, a device never
/// end), and none over ``Limits/maximumPictureBytes``.
enum PictureFile {
  /// The bytes of the photo at `path`. Opened without blocking, checked with `fstat` on the
  /// open descriptor (so a file swapped in between cannot slip past), read to its end.
  /// - Throws: ``InnerPeaceError/pictureMissing(name:)`` if there is no such file, or
  ///   ``InnerPeaceError/pictureUndecodable(name:reason:)`` if it is not a regular file, is too
  ///   large or cannot be read.
  static func read(atPath path: String, name: String) throws(InnerPeaceError) -> [UInt8] {
    try readStamped(atPath: path, name: name).bytes
  }

  /// The bytes, and the status of the open file they were read from (``PictureStamp``).
  static func readStamped(atPath path: String, name: String) throws(InnerPeaceError) -> (
    bytes: [UInt8], stamp: PictureStamp
  ) {
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
    return (bytes, PictureStamp(status))
  }
}

private func readBytes(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
  #if canImport(Glibc)
    Glibc.read(descriptor, buffer, count)
  #else
    Darwin.read(descriptor, buffer, count)
  #endif
}
