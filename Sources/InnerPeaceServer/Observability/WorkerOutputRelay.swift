import Foundation
import Logging
import NIOCore
import NIOExtras
import NIOPosix

/// Reads a render worker's stderr, line by line (swift-nio-extras' `LineBasedFrameDecoder`), into
/// the server's log, so that every line on the server's stderr is a record of its log format:
/// a line that already is one (the worker's own lines, written by its logger in the same format:
/// a JSON object, or a logfmt record starting `time=`) is written as it is; anything else (a
/// crash report of the Swift runtime, a library's message) becomes the `line` field of a
/// `render worker output` warning with the worker's `pid`. The relay ends when the worker's
/// stderr closes, that is once the worker has ended.
final class WorkerOutputRelay: ChannelInboundHandler, Sendable {
  typealias InboundIn = ByteBuffer

  let format: LogFormat
  let pid: pid_t
  let logger: Logger

  init(format: LogFormat, pid: pid_t, logger: Logger) {
    self.format = format
    self.pid = pid
    self.logger = logger
  }

  /// Starts relaying `descriptor` (which it then owns) on `eventLoop`; a descriptor that cannot
  /// be read is closed, and the worker's lines are lost (the worker still runs).
  static func start(
    reading descriptor: Int32, on eventLoop: any EventLoop, format: LogFormat, pid: pid_t, logger: Logger
  )
    async
  {
    let relay = WorkerOutputRelay(format: format, pid: pid, logger: logger)
    do {
      _ = try await NIOPipeBootstrap(group: eventLoop)
        .channelInitializer { channel in
          channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandlers(ByteToMessageHandler(LineBasedFrameDecoder()), relay)
          }
        }
        .takingOwnershipOfDescriptor(input: descriptor).get()
    } catch {
      close(descriptor)
      logger.warning(
        "render worker output not relayed",
        metadata: ["pid": .stringConvertible(Int(pid)), "reason": .string("\(error)")])
    }
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    relay(String(decoding: unwrapInboundIn(data).readableBytesView, as: UTF8.self))
  }

  /// One line of the worker's stderr (without its line feed) into the log.
  func relay(_ line: String) {
    if isRecord(line) {
      LogOutput.write(line + "\n")
    } else if !line.isEmpty {
      logger.warning("render worker output", metadata: ["pid": .stringConvertible(Int(pid)), "line": .string(line)])
    }
  }

  /// Whether a line already is a record of the log's format.
  func isRecord(_ line: String) -> Bool {
    switch format {
    case .json:
      guard line.hasPrefix("{\"time\":") else { return false }
      return (try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any]
    case .text:
      return line.hasPrefix("time=")
    }
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
}
