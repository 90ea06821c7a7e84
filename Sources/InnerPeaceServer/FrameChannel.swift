#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Worker frames (``WorkerWire``) over one file descriptor, with an optional deadline on reads.
struct FrameChannel {
  let descriptor: Int32
  /// Write with `send(MSG_NOSIGNAL)`, so a dead peer is an `EPIPE` error and not a SIGPIPE that
  /// ends this process (the server side, on a socket). Otherwise `write` (the worker side).
  let usesSend: Bool

  enum Failure: Error, CustomStringConvertible {
    /// The other end closed before a whole frame arrived.
    case closed
    /// The deadline passed before a whole frame arrived.
    case timedOut
    /// A system call failed (EPIPE when the other end is gone).
    case system(call: String, errno: Int32)
    /// Bytes arrived that are not a frame.
    case malformed(WireError)

    var description: String {
      switch self {
      case .closed: "the connection closed"
      case .timedOut: "no answer before the deadline"
      case .system(let call, let number): "\(call) failed: \(String(cString: strerror(number)))"
      case .malformed(let error): "malformed frame: \(error.description)"
      }
    }
  }

  func sendFrame(_ kind: WorkerWire.Kind, header: [UInt8], body: [UInt8] = []) throws(Failure) {
    try writeAll(WorkerWire.prefix(kind, headerLength: header.count, bodyLength: body.count) + header)
    if !body.isEmpty { try writeAll(body) }
  }

  private func writeAll(_ bytes: [UInt8]) throws(Failure) {
    var failure: Failure?
    bytes.withUnsafeBytes { buffer in
      var sent = 0
      while sent < buffer.count {
        let start = buffer.baseAddress! + sent
        let count =
          usesSend
          ? send(descriptor, start, buffer.count - sent, Int32(MSG_NOSIGNAL))
          : write(descriptor, start, buffer.count - sent)
        if count < 0 {
          if errno == EINTR { continue }
          failure = .system(call: usesSend ? "send" : "write", errno: errno)
          return
        }
        sent += count
      }
    }
    if let failure { throw failure }
  }

  /// Reads one whole frame. `deadline` bounds the whole frame, not each read.
  func receiveFrame(deadline: ContinuousClock.Instant?) throws(Failure) -> (
    kind: WorkerWire.Kind, header: [UInt8], body: [UInt8]
  ) {
    let prefix = try readExactly(WorkerWire.prefixLength, deadline: deadline)
    let parsed: (kind: WorkerWire.Kind, headerLength: Int, bodyLength: Int)
    do throws(WireError) { parsed = try WorkerWire.parsePrefix(prefix) } catch { throw .malformed(error) }
    let header = try readExactly(parsed.headerLength, deadline: deadline)
    let body = try readExactly(parsed.bodyLength, deadline: deadline)
    return (parsed.kind, header, body)
  }

  private func readExactly(_ count: Int, deadline: ContinuousClock.Instant?) throws(Failure) -> [UInt8] {
    var failure: Failure?
    let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
      while initialized < count {
        if let deadline {
          let remaining = deadline - .now
          guard remaining > .zero else {
            failure = .timedOut
            return
          }
          // Whole milliseconds, plus one so that the poll does not end before the deadline.
          let milliseconds = Int(remaining / .milliseconds(1)) + 1
          var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
          let ready = poll(&poller, 1, Int32(min(milliseconds, 60_000)))
          if ready == 0 { continue }
          if ready < 0 {
            if errno == EINTR { continue }
            failure = .system(call: "poll", errno: errno)
            return
          }
        }
        let got = read(descriptor, buffer.baseAddress! + initialized, count - initialized)
        if got == 0 {
          failure = .closed
          return
        }
        if got < 0 {
          if errno == EINTR { continue }
          failure = errno == ECONNRESET ? .closed : .system(call: "read", errno: errno)
          return
        }
        initialized += got
      }
    }
    if let failure { throw failure }
    return bytes
  }
}
