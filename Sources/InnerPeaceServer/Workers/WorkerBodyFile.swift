import CInnerPeaceProcess
import NIOCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The file a render worker leaves a card's bytes in, for the server to read: an anonymous file in
/// memory (`memfd_create`), one per worker, made by the server and given to the worker as its
/// descriptor 3.
///
/// A card crossing the socket pair went through the pair's buffer (about 208 KiB) in pieces: the
/// worker's write waited for the server's event loop to read each piece, and the event loop then
/// joined the pieces into one frame. Through the file it is one copy in (`pwrite`, the worker) and
/// one copy out (`pread`, the server, straight into the response's buffer), and the frame carries
/// only its header, which says how many bytes the file holds (``WorkerWireHeader/bodyInFile``).
///
/// The worker writes the file only while it renders, and the server reads it as the answer
/// arrives, before the worker is given another request: the two never touch it at once. A card
/// over ``limit`` goes through the socket as before, so the file never holds more than that; where
/// there is no `memfd_create`, no file is made and every card goes through the socket.
enum WorkerBodyFile {
  /// The descriptor the file has in the worker.
  static let descriptorInWorker: Int32 = 3
  /// Set (to `descriptorInWorker`) in a worker's environment when it has the file.
  static let variable = "INNERPEACE_WORKER_BODY_FILE"
  /// The largest card that goes through the file: a PNG og card is about 0.8 MB, a classic
  /// (2048x1536) one about 2 MB.
  static let limit = 8 << 20

  /// A new file, close-on-exec, or `nil` where the system has none.
  static func create() -> Int32? {
    let descriptor = innerpeace_body_file_create()
    return descriptor >= 0 ? descriptor : nil
  }

  /// The worker's file, when the server gave it one: descriptor 3, made close-on-exec (so that
  /// nothing the worker might start inherits it).
  static func inWorker(environment: [String: String]) -> Int32? {
    guard environment[variable] == String(descriptorInWorker),
      fcntl(descriptorInWorker, F_SETFD, FD_CLOEXEC) == 0
    else { return nil }
    return descriptorInWorker
  }

  /// Writes `bytes` at the start of the file (the worker's side). Returns `false` when the file
  /// could not take them all (then the card goes through the socket).
  static func write(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
    bytes.withUnsafeBytes { buffer in
      var written = 0
      while written < buffer.count {
        let count = pwrite(descriptor, buffer.baseAddress! + written, buffer.count - written, off_t(written))
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { return false }
        written += count
      }
      return true
    }
  }

  /// The first `count` bytes of the file (the server's side), in a buffer of their own.
  /// - Throws: ``WorkerWireError/malformed(_:)`` when the worker has no file, `count` is out of
  ///   bounds, or the file holds fewer bytes.
  static func read(
    _ count: Int, from descriptor: Int32?, allocator: ByteBufferAllocator
  ) throws(WorkerWireError) -> ByteBuffer {
    guard let descriptor else { throw .malformed("a card in a body file the worker was not given") }
    guard count > 0, count <= limit else { throw .malformed("a body file of \(count) bytes") }
    var buffer = allocator.buffer(capacity: count)
    let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { space in
      var read = 0
      while read < count {
        let got = pread(descriptor, space.baseAddress! + read, count - read, off_t(read))
        if got < 0 && errno == EINTR { continue }
        guard got > 0 else { break }
        read += got
      }
      return read
    }
    guard read == count else { throw .malformed("the body file holds \(read) of the card's \(count) bytes") }
    return buffer
  }
}
