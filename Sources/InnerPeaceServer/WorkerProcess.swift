import CInnerPeaceProcess
import Foundation
import InnerPeace

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// How the server starts a render worker: its own executable with the hidden `render-worker`
/// subcommand, say. The worker speaks ``WorkerWire`` on stdin and stdout (see ``RenderWorker``).
public struct WorkerLaunch: Sendable {
  /// The file to execute; `/proc/self/exe` runs the very binary the server runs, even if the file
  /// on disk has been replaced since.
  public var executable: String
  /// `argv`, `argv[0]` included.
  public var arguments: [String]
  /// Extra environment variables, on top of the server's own.
  public var environment: [String: String] = [:]

  public init(executable: String, arguments: [String], environment: [String: String] = [:]) {
    self.executable = executable
    self.arguments = arguments
    self.environment = environment
  }
}

/// Why a worker gave no answer.
struct WorkerFailure: Error, CustomStringConvertible {
  let description: String
  /// The request never reached the worker (it was already gone), so it may be sent to another.
  var requestUnsent = false
}

/// One running worker process, seen from the server: its pid and its end of a socket pair.
/// Used by one thread at a time (the pool hands it out).
final class WorkerProcess: @unchecked Sendable {
  let pid: pid_t
  private let channel: FrameChannel
  private var reaped = false
  /// The memory the worker reported holding at rest before its latest render, in bytes (0 until
  /// it has reported). Read and written only by the thread that has the worker.
  private(set) var restingBytes = 0

  /// The environment variable that tells a worker its parent's pid, to check it at start-up.
  static let parentVariable = "INNERPEACE_WORKER_PARENT"

  private init(pid: pid_t, descriptor: Int32) {
    self.pid = pid
    channel = FrameChannel(descriptor: descriptor, usesSend: true)
  }

  /// Starts a worker: a socket pair (close-on-exec on both ends, so no other child inherits them),
  /// the child's end as its stdin and stdout, every other descriptor closed in the child.
  static func spawn(_ launch: WorkerLaunch) throws(WorkerFailure) -> WorkerProcess {
    var pair: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
      throw WorkerFailure(description: "socketpair failed: \(String(cString: strerror(errno)))")
    }
    defer { close(pair[1]) }
    var environment = launch.environment
    environment[parentVariable] = String(getpid())
    var variables = ProcessInfo.processInfo.environment
    for (name, value) in environment { variables[name] = value }
    let argv = launch.arguments.map { strdup($0) } + [nil]
    let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for pointer in argv { free(pointer) }
      for pointer in envp { free(pointer) }
    }
    var pid: pid_t = 0
    let status = innerpeace_spawn_worker(launch.executable, argv, envp, pair[1], &pid)
    guard status == 0 else {
      close(pair[0])
      throw WorkerFailure(description: "cannot start \(launch.executable): \(String(cString: strerror(status)))")
    }
    return WorkerProcess(pid: pid, descriptor: pair[0])
  }

  /// Waits for the worker's ready frame (it has loaded the catalog and the fonts).
  func awaitReady(deadline: ContinuousClock.Instant) throws(WorkerFailure) {
    do throws(FrameChannel.Failure) {
      let frame = try channel.receiveFrame(deadline: deadline)
      guard frame.kind == .ready else { throw FrameChannel.Failure.malformed(WireError("no ready frame")) }
    } catch {
      throw WorkerFailure(description: "did not start: \(end(after: error))")
    }
  }

  /// Sends one request and waits for its answer until `deadline`. A worker that dies, closes,
  /// garbles or misses the deadline is killed and reaped, and the failure says how it ended.
  func render(_ request: CardRequest, deadline: ContinuousClock.Instant) throws(WorkerFailure) -> Result<
    RenderedCard, InnerPeaceError
  > {
    do throws(FrameChannel.Failure) {
      try channel.sendFrame(.request, header: WorkerWire.encode(request))
    } catch {
      throw WorkerFailure(description: end(after: error), requestUnsent: true)
    }
    do throws(FrameChannel.Failure) {
      var frame = try channel.receiveFrame(deadline: deadline)
      if frame.kind == .resting {
        var reader = WireReader(frame.header)
        do throws(WireError) {
          restingBytes = try reader.int()
          try reader.expectEnd()
        } catch {
          throw FrameChannel.Failure.malformed(error)
        }
        frame = try channel.receiveFrame(deadline: deadline)
      }
      switch frame.kind {
      case .card:
        do throws(WireError) {
          return .success(try WorkerWire.decodeCard(facts: frame.header, bytes: frame.body))
        } catch {
          throw FrameChannel.Failure.malformed(error)
        }
      case .failure:
        do throws(WireError) { return .failure(try WorkerWire.decodeError(frame.header)) } catch {
          throw FrameChannel.Failure.malformed(error)
        }
      case .request, .ready, .resting:
        throw FrameChannel.Failure.malformed(WireError("unexpected \(frame.kind) frame"))
      }
    } catch {
      throw WorkerFailure(description: end(after: error))
    }
  }

  /// Ends a worker that failed: waits briefly for one that closed its end (it is dying: its exit
  /// status says why), kills the rest, reaps it, and says how it ended.
  private func end(after failure: FrameChannel.Failure) -> String {
    let status: Int32?
    switch failure {
    case .closed, .system:
      status = waitBriefly(milliseconds: 500) ?? killAndReap()
    case .timedOut, .malformed:
      status = killAndReap()
    }
    close(channel.descriptor)
    let ending = status.map(Self.describe) ?? "ended"
    switch failure {
    case .timedOut: return "worker \(pid) gave no answer before the deadline and was killed"
    case .malformed(let error): return "worker \(pid) sent a malformed frame (\(error.description)) and was killed"
    case .closed, .system: return "worker \(pid) \(ending)"
    }
  }

  /// Stops an idle worker: closing its stdin ends its loop; if it has not exited within `grace`,
  /// it is killed. Returns how it ended.
  func stop(grace milliseconds: Int) -> String {
    close(channel.descriptor)
    let status = waitBriefly(milliseconds: milliseconds) ?? killAndReap()
    return status.map(Self.describe) ?? "ended"
  }

  /// The wait status, if the worker exits within `milliseconds`.
  private func waitBriefly(milliseconds: Int) -> Int32? {
    let deadline = ContinuousClock.now + .milliseconds(milliseconds)
    while true {
      var status: Int32 = 0
      let result = waitpid(pid, &status, WNOHANG)
      if result == pid {
        reaped = true
        return status
      }
      if result < 0 {
        reaped = true
        return nil
      }
      guard ContinuousClock.now < deadline else { return nil }
      usleep(1000)
    }
  }

  private func killAndReap() -> Int32? {
    guard !reaped else { return nil }
    kill(pid, SIGKILL)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
      guard errno == EINTR else {
        reaped = true
        return nil
      }
    }
    reaped = true
    return status
  }

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

  deinit {
    // A worker handle dropped without stop() (it never happens in the pool) still leaves no zombie.
    if !reaped {
      close(channel.descriptor)
      _ = killAndReap()
    }
  }
}
