import CInnerPeaceProcess
import Foundation
public import InnerPeace
import Instrumentation
public import Logging
import NIOCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The render worker process's side: `innerpeace render-worker` loads the catalog and fonts once,
/// then calls ``serve(renderer:afterRender:)``, which renders requests from stdin to stdout until
/// stdin closes. A single-purpose child process: its I/O blocks.
public enum RenderWorker {
  /// Runs the worker loop; returns the process exit status (0 when the server closed stdin).
  ///
  /// First it arms the parent-death signal and ignores SIGINT and SIGTERM (the server drains,
  /// then stops its workers), and moves stdout aside so that nothing printed by a library can
  /// garble a frame (fd 1 then points at stderr, the server's log). Then it answers the server's
  /// hello (refusing another wire version) with ready, and each render request with a card or a
  /// failure, which carries its memory at rest before the render (for `--worker-memory-mb`).
  ///
  /// Each render runs with the request's identity from the frame's `context` as the current
  /// `ServiceContext`, so the worker's lines for it (through a logger made by
  /// ``makeLogger(format:level:label:)``) carry the same `request_id` and `trace_id` as the
  /// server's: one `debug` line per render, failed or not.
  ///
  /// The heap keeps a card's freed buffers for the next card, up to a reserve (``WorkerHeap``);
  /// after a card that left more free, the free memory is handed back to the system. The memory
  /// at rest it reports leaves the kept reserve out.
  ///
  /// - Parameter logger: where the worker's lines go (stderr, the server's log), in the server's
  ///   format.
  public static func serve(
    renderer: CardRenderer, logger: Logger = makeLogger(format: .text, level: .info, label: "innerpeace.worker")
  ) -> Int32 {
    var logger = logger
    logger[metadataKey: "pid"] = .stringConvertible(Int(getpid()))
    let parent = ProcessInfo.processInfo.environment[WorkerLaunch.parentVariable].flatMap { pid_t($0) } ?? 0
    guard innerpeace_worker_prepare(parent) == 0 else { return 1 }
    if RenderFaults.failsAtStart { return 3 }
    let output = fcntl(1, F_DUPFD_CLOEXEC, 3)
    guard output >= 0, dup2(2, 1) == 1 else { return 1 }
    WorkerHeap.keepReserve()
    let stream = BlockingFrameStream(
      input: 0, output: output, bodyFile: WorkerBodyFile.inWorker(environment: ProcessInfo.processInfo.environment))
    do throws(BlockingFrameStream.Failure) {
      guard case .hello = try stream.receive()?.message else { throw .wire(.malformed("no hello frame")) }
      try stream.send(.ready)
      var keepsFreeHeap = false
      while let header = try stream.receive() {
        guard case .render(let request) = header.message else { throw .wire(.malformed("not a render request")) }
        var context = ServiceContext.topLevel
        RequestIdentityInstrument().extract(header.context ?? [:], into: &context, using: DictionaryCarrier())
        try ServiceContext.withValue(context) {
          Result { () throws(BlockingFrameStream.Failure) in
            try render(
              request, encoderThreads: header.encoderThreads ?? 1, renderer: renderer, stream: stream, logger: logger,
              keepsFreeHeap: keepsFreeHeap)
          }
        }.get()
        keepsFreeHeap = WorkerHeap.settle()
      }
      return 0
    } catch {
      logger.error("render worker stopped", metadata: ["reason": .string(error.description)])
      return 1
    }
  }

  /// Renders one request and sends its answer, and logs it. With `keepsFreeHeap` (no trim after
  /// the last card), the free heap kept for this card is left out of the memory at rest.
  private static func render(
    _ request: CardRequest, encoderThreads: Int, renderer: CardRenderer, stream: BlockingFrameStream, logger: Logger,
    keepsFreeHeap: Bool
  ) throws(BlockingFrameStream.Failure) {
    let resting = WorkerHeap.restingBytes(
      privateResident: restingBytes(), keptFree: keepsFreeHeap ? WorkerHeap.freeBytes : 0)
    RenderFaults.inject(for: request, catalog: renderer.catalog, logger: logger)
    let started = ContinuousClock.now
    let result = Result(catching: { () throws(InnerPeaceError) in
      try renderer.render(request, encoderThreads: encoderThreads)
    })
    let milliseconds = ((ContinuousClock.now - started) / .microseconds(100)).rounded() / 10
    switch result {
    case .success(let card):
      logger.debug(
        "render",
        metadata: [
          "format": .string(card.format.rawValue), "bytes": .stringConvertible(card.bytes.count),
          "ms": .stringConvertible(milliseconds), "truncated": .stringConvertible(card.truncated),
        ])
      try stream.send(.card(CardFacts(card), restingBytes: resting), body: card.bytes)
    case .failure(let error):
      logger.debug(
        "render failed", metadata: ["ms": .stringConvertible(milliseconds), "error": .string(error.description)])
      try stream.send(.failure(error, restingBytes: resting))
    }
  }

  /// The process's resident memory that is its own: resident pages less those shared with other
  /// processes (the binary, the fonts), from `/proc/self/statm`; 0 where that is not available.
  /// Read between renders, it is what the worker holds at rest: its caches and heap (with the
  /// free heap kept for the next card, which the worker's report leaves out: ``WorkerHeap``).
  public static func restingBytes() -> Int {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = statm.split(separator: " ").compactMap { Int($0) }
    guard fields.count >= 3 else { return 0 }
    return max(0, fields[1] - fields[2]) * Int(sysconf(Int32(_SC_PAGESIZE)))
  }
}

/// The worker's side of the wire: the frames ``WorkerConnection`` exchanges through NIO's
/// length-field codecs, read and written with blocking calls on two descriptors, and the cards
/// left in `bodyFile` (``WorkerBodyFile``) when there is one.
struct BlockingFrameStream {
  let input: Int32
  let output: Int32
  var bodyFile: Int32?

  enum Failure: Error, CustomStringConvertible {
    /// A system call failed (EPIPE when the server is gone).
    case system(call: String, errno: Int32)
    /// The server closed the connection in the middle of a frame.
    case cutShort
    case wire(WorkerWireError)

    var description: String {
      switch self {
      case .system(let call, let number): "\(call) failed: \(String(cString: strerror(number)))"
      case .cutShort: "the connection closed in the middle of a frame"
      case .wire(let error): error.description
      }
    }
  }

  /// The next frame's header (its body, which only cards have, is dropped), or `nil` when the
  /// server has closed the connection between frames.
  func receive() throws(Failure) -> WorkerWireHeader? {
    guard let prefix = try readExactly(4) else { return nil }
    let length = prefix.reduce(0) { $0 << 8 | Int($1) }
    guard let frame = try readExactly(length) else { throw .cutShort }
    do throws(WorkerWireError) { return try WorkerFrame(decoding: ByteBuffer(bytes: frame)).header } catch {
      throw .wire(error)
    }
  }

  /// Sends one frame: the length field, the header's length and the header, then the body. A body
  /// of at most ``WorkerBodyFile/limit`` bytes goes into `bodyFile` first, when there is one, and
  /// the frame then says so instead of carrying it.
  func send(_ message: WorkerWireHeader.Message, body: [UInt8] = []) throws(Failure) {
    var body = body
    var bodyInFile: Int?
    if let bodyFile, !body.isEmpty, body.count <= WorkerBodyFile.limit, WorkerBodyFile.write(body, to: bodyFile) {
      bodyInFile = body.count
      body = []
    }
    let header = WorkerFrame.encodedHeader(WorkerWireHeader(message, bodyInFile: bodyInFile))
    var head: [UInt8] = []
    head.reserveCapacity(8 + header.count)
    for length in [4 + header.count + body.count, header.count] {
      head += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: length >> $0) }
    }
    head += header
    try writeAll(head)
    try writeAll(body)
  }

  private func writeAll(_ bytes: [UInt8]) throws(Failure) {
    var failure: Failure?
    bytes.withUnsafeBytes { buffer in
      var sent = 0
      while sent < buffer.count {
        let count = write(output, buffer.baseAddress! + sent, buffer.count - sent)
        if count < 0 {
          if errno == EINTR { continue }
          failure = .system(call: "write", errno: errno)
          return
        }
        sent += count
      }
    }
    if let failure { throw failure }
  }

  /// Exactly `count` bytes, or `nil` when the connection closes before the first of them.
  private func readExactly(_ count: Int) throws(Failure) -> [UInt8]? {
    var failure: Failure?
    var closed = false
    let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
      while initialized < count {
        let got = read(input, buffer.baseAddress! + initialized, count - initialized)
        if got == 0 {
          if initialized == 0 { closed = true } else { failure = .cutShort }
          return
        }
        if got < 0 {
          if errno == EINTR { continue }
          if errno == ECONNRESET, initialized == 0 {
            closed = true
          } else {
            failure = .system(call: "read", errno: errno)
          }
          return
        }
        initialized += got
      }
    }
    if let failure { throw failure }
    return closed ? nil : bytes
  }
}

/// Faults on purpose, for the tests that prove a crashing render costs one request and not the
/// server. Compiled only into debug builds: a release binary has no trigger at all (the test suite
/// and `scripts/check-release-faults.sh` check that its bytes hold none of these names).
///
/// Each variable names a quote text; a request with exactly that text (its own, or in a worker
/// the catalog quote it asks for by index) then
/// - `INNERPEACE_FAULT_TRAP_TEXT`: traps (an overflowing Double-to-Int32 conversion, SIGILL);
/// - `INNERPEACE_FAULT_ABORT_TEXT`: aborts (SIGABRT, as a C library's failed assertion does);
/// - `INNERPEACE_FAULT_SLOW_TEXT`: says so on stderr (the server's log, for a test to wait for),
///   sleeps 2 s, then renders normally;
/// - `INNERPEACE_FAULT_HANG_TEXT`: never answers.
/// And `INNERPEACE_FAULT_START_FILE` names a file: while it exists, a worker exits at start-up.
enum RenderFaults {
  #if DEBUG
    private static let environment = ProcessInfo.processInfo.environment

    static func inject(for request: CardRequest, catalog: Catalog? = nil, logger: Logger? = nil) {
      let text: String
      switch request.quote {
      case .text(let own, _): text = own
      case .index(let index):
        guard let catalog, catalog.quotes.indices.contains(index) else { return }
        text = catalog.quotes[index].text
      default: return
      }
      if text == environment["INNERPEACE_FAULT_TRAP_TEXT"] {
        let scale = -Double(text.utf8.count) * 1e12
        _ = Int32(scale)
      }
      if text == environment["INNERPEACE_FAULT_ABORT_TEXT"] { abort() }
      if text == environment["INNERPEACE_FAULT_SLOW_TEXT"] {
        if let logger {
          logger.warning("render worker: slow fault, rendering in 2 s")
        } else {
          FileHandle.standardError.write(Data("render worker: slow fault, rendering in 2 s\n".utf8))
        }
        usleep(2_000_000)
      }
      if text == environment["INNERPEACE_FAULT_HANG_TEXT"] {
        while true { sleep(3600) }
      }
    }

    /// Whether a worker should fail at start-up now.
    static var failsAtStart: Bool {
      environment["INNERPEACE_FAULT_START_FILE"].map { FileManager.default.fileExists(atPath: $0) } ?? false
    }
  #else
    @inline(__always) static func inject(for request: CardRequest, catalog: Catalog? = nil, logger: Logger? = nil) {}
    static var failsAtStart: Bool { false }
  #endif
}
