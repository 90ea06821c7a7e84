import CInnerPeaceProcess
import Dispatch
import Foundation
import InnerPeace
import Instrumentation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOExtras
import NIOPosix
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Why a worker gave no answer.
struct WorkerFailure: Error, CustomStringConvertible {
  let description: String
  /// The request never reached the worker (it was already gone), so it may be sent to another.
  var requestUnsent = false
}

/// One running render worker process, seen from the server.
///
/// Its end of the socket pair is a NIO channel: frames in and out through swift-nio-extras'
/// length-field codecs, each request answered in order by `RequestResponseHandler`. Its exit is
/// watched through a pidfd read by a `DispatchSource`: the moment the process ends it is reaped
/// (no `<defunct>` is left) and ``exit`` completes with its wait status, whether it was rendering
/// or idle. Every wait (the answer, the exit after a close) is a task timeout on the pool's clock.
final class WorkerConnection: Sendable {
  let pid: pid_t
  private let channel: any Channel
  /// The wait status once the process has ended and been reaped (`nil`: it was reaped elsewhere).
  let exit: EventLoopFuture<Int32?>
  private let latestRestingBytes = Atomic<Int>(0)
  /// The server's descriptor of the worker's ``WorkerBodyFile`` (closed with this object), if it
  /// has one.
  let bodyFile: Int32?

  /// The memory the worker reported holding at rest before its latest render, in bytes (0 until
  /// it has reported).
  var restingBytes: Int { latestRestingBytes.load(ordering: .relaxed) }

  private init(pid: pid_t, channel: any Channel, exit: EventLoopFuture<Int32?>, bodyFile: Int32?) {
    self.pid = pid
    self.channel = channel
    self.exit = exit
    self.bodyFile = bodyFile
  }

  deinit {
    if let bodyFile { close(bodyFile) }
  }

  // MARK: Starting

  /// Starts a worker and waits (up to `timeout` on `clock`) until it says it is ready. With
  /// ``WorkerLaunch/relayedLogFormat`` its stderr is read by a ``WorkerOutputRelay`` into `logger`.
  ///
  /// The process is spawned on `eventLoop`'s thread: a worker arms PR_SET_PDEATHSIG, which fires
  /// when the thread that spawned it ends, and an event loop's thread lives as long as the server
  /// (a thread of the cooperative pool may be retired while idle).
  static func start(
    _ launch: WorkerLaunch, on eventLoop: any EventLoop, timeout: Duration, clock: some Clock<Duration>,
    logger: Logger = Logger(label: "innerpeace")
  ) async throws(WorkerFailure) -> WorkerConnection {
    let spawned: (pid: pid_t, descriptor: Int32, errorOutput: Int32?, bodyFile: Int32?, exit: EventLoopFuture<Int32?>)
    do {
      spawned = try await eventLoop.submit { try Self.spawn(launch, exitOn: eventLoop) }.get()
    } catch let failure as WorkerFailure {
      throw failure
    } catch {
      throw WorkerFailure(description: "cannot start \(launch.executable): \(error)")
    }
    if let errorOutput = spawned.errorOutput, let format = launch.relayedLogFormat {
      // Ends by itself when the worker's stderr closes (the worker has ended).
      await WorkerOutputRelay.start(
        reading: errorOutput, on: eventLoop, format: format, pid: spawned.pid, logger: logger)
    }
    let channel: any Channel
    do {
      channel = try await NIOPipeBootstrap(group: eventLoop)
        // A card (hundreds of KiB) in a few large reads, not many small ones.
        .channelOption(
          .recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 4096, initial: 1 << 18, maximum: 1 << 22)
        )
        .channelOption(.maxMessagesPerRead, value: 16)
        .channelInitializer { channel in
          channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandlers(
              ByteToMessageHandler(LengthFieldBasedFrameDecoder(lengthFieldBitLength: .fourBytes)),
              LengthFieldPrepender(lengthFieldBitLength: .fourBytes),
              RequestResponseHandler<ByteBuffer, ByteBuffer>())
          }
        }
        .takingOwnershipOfDescriptor(inputOutput: spawned.descriptor).get()
    } catch {
      close(spawned.descriptor)
      if let bodyFile = spawned.bodyFile { close(bodyFile) }
      kill(spawned.pid, SIGKILL)
      throw WorkerFailure(description: "cannot open the channel of worker \(spawned.pid): \(error)")
    }
    let worker = WorkerConnection(pid: spawned.pid, channel: channel, exit: spawned.exit, bodyFile: spawned.bodyFile)
    do throws(Exchange) {
      let frame = try await worker.exchange(WorkerFrame(.hello), timeout: timeout, clock: clock)
      guard case .ready = frame.header.message else { throw .malformed("no ready frame") }
    } catch {
      throw WorkerFailure(description: "did not start: \(await worker.end(after: error, clock: clock))")
    }
    return worker
  }

  /// Spawns the process with a socket pair (close-on-exec on both ends, so no other child
  /// inherits them), the child's end as its stdin and stdout, and its ``WorkerBodyFile`` (where
  /// the system has one) as its descriptor 3, and opens the watch on its exit.
  /// With ``WorkerLaunch/relayedLogFormat``, its stderr is a pipe (close-on-exec too) whose
  /// reading end is returned as `errorOutput`.
  private static func spawn(
    _ launch: WorkerLaunch, exitOn eventLoop: any EventLoop
  ) throws(WorkerFailure) -> (
    pid: pid_t, descriptor: Int32, errorOutput: Int32?, bodyFile: Int32?, exit: EventLoopFuture<Int32?>
  ) {
    var pair: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
      throw WorkerFailure(description: "socketpair failed: \(String(cString: strerror(errno)))")
    }
    defer { close(pair[1]) }
    var errorPipe: [Int32] = [-1, -1]
    if launch.relayedLogFormat != nil {
      guard innerpeace_pipe_cloexec(&errorPipe) == 0 else {
        close(pair[0])
        throw WorkerFailure(description: "pipe2 failed: \(String(cString: strerror(errno)))")
      }
    }
    defer { if errorPipe[1] >= 0 { close(errorPipe[1]) } }
    let bodyFile = WorkerBodyFile.create()
    var variables = ProcessInfo.processInfo.environment
    for (name, value) in launch.environment { variables[name] = value }
    variables[WorkerLaunch.parentVariable] = String(getpid())
    variables[WorkerBodyFile.variable] = bodyFile.map { _ in String(WorkerBodyFile.descriptorInWorker) }
    let argv = launch.arguments.map { strdup($0) } + [nil]
    let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for pointer in argv { free(pointer) }
      for pointer in envp { free(pointer) }
    }
    var pid: pid_t = 0
    let status = innerpeace_spawn_worker(launch.executable, argv, envp, pair[1], errorPipe[1], bodyFile ?? -1, &pid)
    guard status == 0 else {
      close(pair[0])
      if errorPipe[0] >= 0 { close(errorPipe[0]) }
      if let bodyFile { close(bodyFile) }
      throw WorkerFailure(description: "cannot start \(launch.executable): \(String(cString: strerror(status)))")
    }
    let pidfd = innerpeace_pidfd_open(pid)
    guard pidfd >= 0 else {
      let reason = String(cString: strerror(errno))
      close(pair[0])
      if errorPipe[0] >= 0 { close(errorPipe[0]) }
      if let bodyFile { close(bodyFile) }
      kill(pid, SIGKILL)
      var ignored: Int32 = 0
      waitpid(pid, &ignored, 0)
      throw WorkerFailure(description: "cannot watch worker \(pid): pidfd_open failed: \(reason)")
    }
    let exit = eventLoop.makePromise(of: Int32?.self)
    let watch = DispatchSource.makeReadSource(fileDescriptor: pidfd, queue: exitQueue)
    // The handler holds the source until it cancels it, once the process is reaped.
    watch.setEventHandler {
      var status: Int32 = 0
      let result = waitpid(pid, &status, WNOHANG)
      guard result != 0 else { return }
      watch.cancel()
      exit.succeed(result == pid ? status : nil)
    }
    watch.setCancelHandler { close(pidfd) }
    watch.activate()
    return (pid, pair[0], errorPipe[0] >= 0 ? errorPipe[0] : nil, bodyFile, exit.futureResult)
  }

  /// Where the exit watches run: a waitpid that cannot block (the process has ended).
  private static let exitQueue = DispatchQueue(label: "innerpeace.worker-exits")

  // MARK: Rendering

  /// Sends one request (its PNG encoded on `encoderThreads` threads) and waits (up to `timeout` on
  /// `clock`) for its answer. A worker that dies,
  /// closes, garbles or misses the deadline is killed if need be and reaped, and the failure says
  /// how it ended.
  func render(
    _ request: CardRequest, encoderThreads: Int = 1, timeout: Duration, clock: some Clock<Duration>
  ) async throws(WorkerFailure) -> Result<FinishedCard, InnerPeaceError> {
    do throws(Exchange) {
      let frame = try await exchange(
        WorkerFrame(
          .render(request), context: Self.requestIdentity(), encoderThreads: encoderThreads > 1 ? encoderThreads : nil),
        timeout: timeout, clock: clock)
      switch frame.header.message {
      case .card(let facts, let resting):
        latestRestingBytes.store(resting, ordering: .relaxed)
        return .success(FinishedCard(facts: facts, body: frame.body))
      case .failure(let error, let resting):
        latestRestingBytes.store(resting, ordering: .relaxed)
        return .failure(error)
      case .hello, .ready, .render:
        throw .malformed("an answer that is not a card or a failure")
      }
    } catch {
      let unsent = error == .unsent
      throw WorkerFailure(description: await end(after: error, clock: clock), requestUnsent: unsent)
    }
  }

  /// The current request's identity (``RequestIdentity``) as the wire header's `context`, or
  /// `nil` outside a request.
  private static func requestIdentity() -> [String: String]? {
    guard let context = ServiceContext.current else { return nil }
    var carrier: [String: String] = [:]
    RequestIdentityInstrument().inject(context, into: &carrier, using: DictionaryCarrier())
    return carrier.isEmpty ? nil : carrier
  }

  /// How an exchange failed.
  private enum Exchange: Error, Equatable {
    /// The request could not be written: the worker was already gone.
    case unsent
    /// The channel closed before the answer came.
    case closed
    /// No answer before the deadline (or the waiting task was cancelled).
    case timedOut
    /// An answer that is not a frame of this wire.
    case malformed(String)
  }

  /// Writes one request frame and returns its answer (the frame the worker sends back) and the
  /// write's outcome. A request that cannot be written fails its answer at once: a write to a
  /// channel that has closed already (its worker died before the channel was registered, say)
  /// never reaches `RequestResponseHandler`, which would otherwise leave the answer waiting until
  /// the deadline.
  static func send(
    _ request: ByteBuffer, on channel: any Channel
  ) -> (answer: EventLoopFuture<ByteBuffer>, written: EventLoopFuture<Void>) {
    let answer = channel.eventLoop.makePromise(of: ByteBuffer.self)
    let written = channel.eventLoop.makePromise(of: Void.self)
    written.futureResult.whenFailure { answer.fail($0) }
    channel.writeAndFlush((request, answer), promise: written)
    return (answer.futureResult, written.futureResult)
  }

  private func exchange(
    _ frame: WorkerFrame, timeout: Duration, clock: some Clock<Duration>
  ) async throws(Exchange) -> WorkerFrame {
    let (answer, written) = Self.send(frame.encoded(allocator: channel.allocator), on: channel)
    // On the deadline the worker is killed and its channel closed, which fails `answer`.
    let outcome = await Self.wait(for: answer, timeout: timeout, clock: clock) { [self] in
      kill(pid, SIGKILL)
      channel.close(promise: nil)
    }
    switch outcome {
    case nil: throw .timedOut
    case .failure:
      if (try? await written.get()) == nil { throw .unsent }
      throw .closed
    case .success(let bytes):
      do throws(WorkerWireError) {
        var frame = try WorkerFrame(decoding: bytes)
        if let count = frame.header.bodyInFile {
          guard frame.body.readableBytes == 0 else { throw .malformed("a card both in the frame and in the file") }
          frame.body = try WorkerBodyFile.read(count, from: bodyFile, allocator: channel.allocator)
        }
        return frame
      } catch {
        throw .malformed(error.description)
      }
    }
  }

  // MARK: Ending

  /// Ends a worker that failed: waits briefly for one that closed its end (it is dying: its exit
  /// status says why), kills the rest, and says how it ended.
  private func end(after failure: Exchange, clock: some Clock<Duration>) async -> String {
    switch failure {
    case .closed, .unsent:
      return "worker \(pid) \(await stop(grace: .milliseconds(500), clock: clock))"
    case .timedOut:
      _ = await stop(grace: .zero, clock: clock)
      return "worker \(pid) gave no answer before the deadline and was killed"
    case .malformed(let reason):
      _ = await stop(grace: .zero, clock: clock)
      return "worker \(pid) sent a malformed frame (\(reason)) and was killed"
    }
  }

  /// Stops the worker: closing its end of the channel ends its loop; if it has not exited within
  /// `grace`, it is killed. Returns how it ended, once it is reaped.
  func stop(grace: Duration, clock: some Clock<Duration>) async -> String {
    channel.close(promise: nil)
    let status: Result<Int32?, any Error>?
    if grace > .zero {
      status = await Self.wait(for: exit, timeout: grace, clock: clock) { [pid] in kill(pid, SIGKILL) }
    } else {
      kill(pid, SIGKILL)
      status = nil
    }
    let ended: Int32?
    if case .success(let reaped) = status {
      ended = reaped
    } else {
      ended = (try? await exit.get()) ?? nil
    }
    return ended.map(Self.describe) ?? "ended"
  }

  /// `future`'s result, or `nil` when `timeout` passes on `clock` first (or the waiting task is
  /// cancelled). Then `onTimeout` runs, and it must make `future` complete (kill the process,
  /// close the channel): the wait returns once both have happened.
  ///
  /// The answer is awaited by the calling task itself and the deadline sleeps in a task of its
  /// own, cancelled (not awaited) once the answer is in: a render's answer costs one hand-off
  /// between threads, not the three of a task group (a child for the answer, the group's
  /// resumption, the wait for the cancelled sleeper). The answer's result is handed over in the
  /// lock, not through the continuation: ThreadSanitizer does not see the runtime's hand-off of a
  /// continuation's value when the continuation is resumed before its task awaits it.
  static func wait<Value: Sendable>(
    for future: EventLoopFuture<Value>, timeout: Duration, clock: some Clock<Duration>,
    onTimeout: @escaping @Sendable () -> Void
  ) async -> Result<Value, any Error>? {
    let state = NIOLockedValueBox(WaitState<Value>())
    let deadline = Task {
      try? await clock.sleep(for: timeout)
      let expired = state.withLockedValue { state in
        guard state.end == nil else { return false }
        state.end = .deadline
        return true
      }
      if expired { onTimeout() }
    }
    await withTaskCancellationHandler {
      await withUnsafeContinuation { (answered: UnsafeContinuation<Void, Never>) in
        future.whenComplete { result in
          state.withLockedValue { $0.result = result }
          answered.resume()
        }
      }
    } onCancel: {
      deadline.cancel()
    }
    let (result, answeredFirst) = state.withLockedValue { state in
      if state.end == nil { state.end = .answer }
      return (state.result, state.end == .answer)
    }
    if answeredFirst, let result {
      deadline.cancel()
      return result
    }
    // The deadline came first: its task has claimed it and runs (or has run) `onTimeout`.
    await deadline.value
    return nil
  }

  /// What a ``wait(for:timeout:clock:onTimeout:)`` has seen so far.
  private struct WaitState<Value: Sendable>: Sendable {
    /// Which came first: the answer or the deadline; the other then does nothing.
    var end: WaitEnd?
    /// The answer, once the future has completed.
    var result: Result<Value, any Error>?
  }

  /// How a ``wait(for:timeout:clock:onTimeout:)`` ended.
  private enum WaitEnd { case answer, deadline }

  /// "exited with status 1", "was killed by signal 4 (SIGILL)".
  static func describe(_ status: Int32) -> String {
    let signal = status & 0x7f
    if signal == 0 { return "exited with status \((status >> 8) & 0xff)" }
    let names: [Int32: String] = [
      SIGILL: "SIGILL", SIGABRT: "SIGABRT", SIGSEGV: "SIGSEGV", SIGBUS: "SIGBUS", SIGFPE: "SIGFPE",
      SIGKILL: "SIGKILL", SIGTRAP: "SIGTRAP", SIGTERM: "SIGTERM", SIGPIPE: "SIGPIPE", SIGINT: "SIGINT",
    ]
    return "was killed by signal \(signal) (\(names[signal] ?? "SIG?"))"
  }
}
