import CInnerPeaceProcess
import Foundation
public import InnerPeace

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The render worker process's side: `innerpeace render-worker` loads the catalog and fonts once,
/// then calls ``serve(renderer:)``, which renders requests from stdin to stdout until stdin closes.
public enum RenderWorker {
  /// Runs the worker loop; returns the process exit status (0 when the server closed stdin).
  ///
  /// First it arms the parent-death signal and ignores SIGINT and SIGTERM (the server drains,
  /// then stops its workers), and moves stdout aside so that nothing printed by a library can
  /// garble a frame (fd 1 then points at stderr, the server's log). Then it sends a ready frame,
  /// and answers each request frame with a resting frame (its memory at rest, for the server's
  /// `--worker-memory-mb`), then a card frame or a failure frame.
  ///
  /// - Parameter afterRender: called after each answer is sent (a card or a failure), so the
  ///   process can hand freed memory back to the system before it reports its memory at rest.
  public static func serve(renderer: CardRenderer, afterRender: () -> Void = {}) -> Int32 {
    let parent = ProcessInfo.processInfo.environment[WorkerProcess.parentVariable].flatMap { pid_t($0) } ?? 0
    guard innerpeace_worker_prepare(parent) == 0 else { return 1 }
    if RenderFaults.failsAtStart { return 3 }
    let output = fcntl(1, F_DUPFD_CLOEXEC, 3)
    guard output >= 0, dup2(2, 1) == 1 else { return 1 }
    let input = FrameChannel(descriptor: 0, usesSend: false)
    let answers = FrameChannel(descriptor: output, usesSend: false)
    do throws(FrameChannel.Failure) {
      var ready = WireWriter()
      ready.int(Int(getpid()))
      try answers.sendFrame(.ready, header: ready.bytes)
      while let request = try nextRequest(input) {
        var resting = WireWriter()
        resting.int(restingBytes())
        try answers.sendFrame(.resting, header: resting.bytes)
        RenderFaults.inject(for: request, catalog: renderer.catalog)
        switch Result(catching: { () throws(InnerPeaceError) in try renderer.render(request) }) {
        case .success(let card):
          try answers.sendFrame(.card, header: WorkerWire.encodeFacts(card), body: card.bytes)
          afterRender()
        case .failure(let error):
          try answers.sendFrame(.failure, header: WorkerWire.encode(error))
          afterRender()
        }
      }
      return 0
    } catch {
      LogOutput.write("innerpeace render-worker \(getpid()): \(error.description)\n")
      return 1
    }
  }

  /// The process's resident memory that is its own: resident pages less those shared with other
  /// processes (the binary, the fonts), from `/proc/self/statm`; 0 where that is not available.
  /// Read between renders, it is what the worker holds at rest: its caches and heap.
  public static func restingBytes() -> Int {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = statm.split(separator: " ").compactMap { Int($0) }
    guard fields.count >= 3 else { return 0 }
    return max(0, fields[1] - fields[2]) * Int(sysconf(Int32(_SC_PAGESIZE)))
  }

  /// The next request, or `nil` when the server has closed our stdin.
  private static func nextRequest(_ input: FrameChannel) throws(FrameChannel.Failure) -> CardRequest? {
    let frame: (kind: WorkerWire.Kind, header: [UInt8], body: [UInt8])
    do {
      frame = try input.receiveFrame(deadline: nil)
    } catch {
      if case .closed = error { return nil }
      throw error
    }
    guard frame.kind == .request else { throw .malformed(WireError("not a request frame")) }
    do throws(WireError) { return try WorkerWire.decodeRequest(frame.header) } catch { throw .malformed(error) }
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
/// - `INNERPEACE_FAULT_SLOW_TEXT`: sleeps 2 s, then renders normally;
/// - `INNERPEACE_FAULT_HANG_TEXT`: never answers.
/// And `INNERPEACE_FAULT_START_FILE` names a file: while it exists, a worker exits at start-up.
enum RenderFaults {
  #if DEBUG
    private static let environment = ProcessInfo.processInfo.environment

    static func inject(for request: CardRequest, catalog: Catalog? = nil) {
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
      if text == environment["INNERPEACE_FAULT_SLOW_TEXT"] { usleep(2_000_000) }
      if text == environment["INNERPEACE_FAULT_HANG_TEXT"] {
        while true { sleep(3600) }
      }
    }

    /// Whether a worker should fail at start-up now.
    static var failsAtStart: Bool {
      environment["INNERPEACE_FAULT_START_FILE"].map { FileManager.default.fileExists(atPath: $0) } ?? false
    }
  #else
    @inline(__always) static func inject(for request: CardRequest, catalog: Catalog? = nil) {}
    static var failsAtStart: Bool { false }
  #endif
}
