import ArgumentParser
import Foundation
import InnerPeace
import NIOCore

/// `innerpeace`: calm quote cards from the command line.
@main
struct InnerPeaceCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "innerpeace",
    abstract: "Calm quote cards: white italic serif with a soft dark halo over a nature photograph.",
    version: InnerPeaceVersion.current,
    subcommands: [
      RenderCommand.self, ServeCommand.self, BatchCommand.self, QuotesCommand.self, ScheduleCommand.self,
      SignCommand.self, HealthCommand.self, RenderWorkerCommand.self,
    ]
  )

  /// Parses and runs a command; every failure is one line on stderr and a non-zero exit status.
  static func main() async {
    StandardStreams.ignoreBrokenPipes()
    StandardStreams.reserveClosedStreams()
    do {
      if let argument = firstArgumentNotUTF8() {
        throw CommandLineError.usage("\(argument) is not valid UTF-8")
      }
      let arguments = Array(CommandLine.arguments.dropFirst())
      var command: any ParsableCommand
      var sources: [ServeEnvironment.Source] = []
      if arguments.first == "serve" {
        (command, sources) = try ServeEnvironment.parse(
          commandLine: Array(arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
      } else {
        command = try parseAsRoot()
      }
      // One card and exit keeps glibc's own policy, which reuses a freed buffer for the next
      // (a quarter fewer page faults); the policy is for processes that render many cards.
      if !(command is RenderCommand) { MemoryPolicy.apply() }
      do {
        // Called here, not through an async helper: a synchronous command (a render worker above
        // all) then runs on this thread without starting the concurrency runtime's threads and
        // descriptors.
        if var asyncCommand = command as? any AsyncParsableCommand {
          try await asyncCommand.run()
        } else {
          try command.run()
        }
      } catch let error as CommandLineError where !sources.isEmpty {
        throw ServeEnvironment.attributed(error, sources: sources)
      }
      // The work is done (a card written stays intact), but some of what it said was lost.
      if StandardStreams.errorStreamFailed { Foundation.exit(ExitStatus.ioError) }
    } catch let code as ExitCode {
      // A command that already said what went wrong (batch: the failures and the summary).
      Foundation.exit(code == .success && StandardStreams.errorStreamFailed ? ExitStatus.ioError : code.rawValue)
    } catch let error as StandardStreams.Failure {
      fail(error.description, code: ExitStatus.ioError)
    } catch let error as BatchWriteError {
      fail(error.description, code: ExitStatus.cannotCreate)
    } catch let error as CommandLineError {
      fail(error.description, code: error.exitCode)
    } catch let error as InnerPeaceError {
      fail(wording(for: error), code: ExitStatus.code(for: error))
    } catch let error as BatchPlanError {
      fail(wording(for: error), code: ExitStatus.usage)
    } catch let error as ScheduleError {
      fail(wording(for: error), code: ExitStatus.usage)
    } catch {
      // --help and --version arrive here as "errors" that exit 0: their text goes to stdout.
      if exitCode(for: error) == .success {
        do throws(StandardStreams.Failure) {
          let text = fullMessage(for: error)
          if !text.isEmpty { try StandardStreams.writeOutput(text + "\n") }
        } catch {
          fail(error.description, code: ExitStatus.ioError)
        }
        Foundation.exit(0)
      }
      fail(
        message(for: error).split(separator: "\n").first.map(String.init) ?? "invalid arguments", code: ExitStatus.usage
      )
    }
  }

  /// The one place the core's neutral wording names the command line's options, one function per
  /// error type of the core: a value refused by a rule of the core names the option it came from
  /// (`--days 0 must be from 1 to 366`). A render's errors name none but `--transparent`.
  static func wording(for error: InnerPeaceError) -> String {
    switch error {
    case .transparencyUnsupported(let format):
      "\(format.rawValue.uppercased()) has no alpha channel: use png, webp or avif with --transparent"
    default: error.description
    }
  }

  /// A batch plan's errors, each naming its option (`--shard`, `--count`, `--preset`).
  static func wording(for error: BatchPlanError) -> String {
    switch error {
    case .shardMalformed, .shardOutOfRange, .quoteCountOutOfRange: "--" + error.description
    case .presetListEmpty: "--preset: at least one preset is needed"
    }
  }

  /// A schedule's errors, each naming its option (`--days`, `--hour`).
  static func wording(for error: ScheduleError) -> String { "--" + error.description }

  /// The one place an error of the system (a folder that cannot be made, a file that cannot be
  /// read) becomes words: the system's own for its error number (`No such file or directory`,
  /// strerror), found in a Foundation error or the POSIX error under it, never Foundation's
  /// `Error Domain=NSPOSIXErrorDomain Code=2 …`; any other error's own description, on one line.
  static func wording(forSystemError error: any Error) -> String {
    if let number = systemErrorNumber(error) { return String(cString: strerror(number)) }
    let object = error as NSError
    let isFoundations = object.domain == NSCocoaErrorDomain || object.domain == NSPOSIXErrorDomain
    let text = isFoundations ? object.localizedDescription : String(describing: error)
    return text.split(whereSeparator: \.isNewline).first.map(String.init) ?? "unknown error"
  }

  /// The POSIX error number of a system error: NIO's `IOError`'s, a Foundation error's own
  /// (`NSPOSIXErrorDomain`, `POSIXError`),
  /// the one under it (`NSUnderlyingErrorKey`, as swift-corelibs-foundation's file errors carry
  /// it), or the one a `CocoaError` file code stands for.
  private static func systemErrorNumber(_ error: any Error) -> Int32? {
    if let posix = error as? POSIXError { return posix.code.rawValue }
    // A socket's: `bind(…): Address already in use (errno: 98)`.
    if let socket = error as? IOError { return socket.errnoCode }
    let object = error as NSError
    if object.domain == NSPOSIXErrorDomain { return Int32(truncatingIfNeeded: object.code) }
    if let underlying = object.userInfo[NSUnderlyingErrorKey] as? any Error,
      let number = systemErrorNumber(underlying)
    {
      return number
    }
    guard let cocoa = error as? CocoaError else { return nil }
    switch cocoa.code {
    case .fileNoSuchFile, .fileReadNoSuchFile: return ENOENT
    case .fileWriteNoPermission, .fileReadNoPermission: return EACCES
    case .fileWriteFileExists: return EEXIST
    case .fileWriteOutOfSpace: return ENOSPC
    case .fileWriteVolumeReadOnly: return EROFS
    default: return nil
    }
  }

  /// The option (or position) of the first argument whose bytes are not UTF-8. Swift's
  /// `CommandLine.arguments` would replace such bytes with U+FFFD, and a card would show text the
  /// user never wrote; the service refuses the same bytes with a 400.
  static func firstArgumentNotUTF8() -> String? {
    let argv = CommandLine.unsafeArgv
    for position in 1..<Int(CommandLine.argc) {
      guard let raw = argv[position] else { continue }
      let bytes = UnsafeRawBufferPointer(start: raw, count: strlen(raw)).bindMemory(to: UInt8.self)
      guard String(validating: bytes, as: UTF8.self) == nil else { continue }
      // `--text=value` names its option; a value after `--text` is named by the option before it.
      if bytes.starts(with: "--".utf8), let equals = bytes.firstIndex(of: UInt8(ascii: "=")) {
        return "the value of \(String(decoding: bytes[..<equals], as: UTF8.self))"
      }
      if position > 1, let previous = argv[position - 1], previous.pointee == UInt8(ascii: "-") {
        return "the value of \(String(cString: previous))"
      }
      return "argument \(position)"
    }
    return nil
  }

  private static func fail(_ message: String, code: Int32) -> Never {
    StandardStreams.writeError("innerpeace: error: \(message)\n")
    Foundation.exit(code)
  }
}

/// Problems the command line itself finds (as opposed to the renderer).
struct CommandLineError: Error, CustomStringConvertible {
  let description: String
  let exitCode: Int32

  static func usage(_ message: String) -> CommandLineError {
    CommandLineError(description: message, exitCode: ExitStatus.usage)
  }
  static func cannotWrite(_ message: String) -> CommandLineError {
    CommandLineError(description: message, exitCode: ExitStatus.cannotCreate)
  }
}

/// Exit statuses, from BSD's sysexits.h, so scripts can tell bad arguments from bad data.
enum ExitStatus {
  /// Bad arguments: unknown preset or format, bad size, index out of range, empty text.
  static let usage: Int32 = 64
  /// A catalog file that is malformed or invalid, or a picture that cannot be decoded.
  static let dataError: Int32 = 65
  /// A catalog file or picture that is missing.
  static let noInput: Int32 = 66
  /// The bundled fonts are missing.
  static let unavailable: Int32 = 69
  /// Cairo, Pango or an encoder failed.
  static let software: Int32 = 70
  /// The output cannot be written.
  static let cannotCreate: Int32 = 73
  /// Writing to stdout or stderr failed (a full disk, a closed stream, a reader gone).
  static let ioError: Int32 = 74

  /// The one place renderer errors become exit statuses (a batch plan's and a schedule's errors
  /// are all bad arguments, ``usage``).
  static func code(for error: InnerPeaceError) -> Int32 {
    switch error {
    case .catalogUnreadable, .pictureMissing: noInput
    case .catalogMalformed, .catalogInvalid, .pictureUndecodable, .pictureChanged, .decodingFailed: dataError
    case .pictureNameInvalid, .pictureUnknown, .quoteIndexOutOfRange, .textInvalid, .authorInvalid, .presetUnknown,
      .sizeInvalid, .formatUnknown, .transparencyUnsupported:
      usage
    case .fontsUnavailable: unavailable
    case .renderFailed, .encodingFailed: software
    }
  }
}
