import ArgumentParser
import Foundation
import InnerPeaceServer

/// Where the URL-signing key comes from: `--signing-key-file`, else `INNERPEACE_SIGNING_KEY`.
///
/// The key is bytes: the file's bytes as they are (any binary), or the variable's text as UTF-8,
/// or, after a `base64:` prefix, the bytes the rest of the variable encodes in base64; surrounding
/// ASCII white space removed, at least 32 bytes left.
struct SigningKeyOptions: ParsableArguments {
  @Option(
    name: .customLong("signing-key-file"),
    help: ArgumentHelp(
      "A file holding the URL-signing key: its bytes, at least 32 (else the variable INNERPEACE_SIGNING_KEY holds the key).",
      valueName: "file"))
  var signingKeyFile: String?

  /// The variable that may hold the key itself.
  static let environmentVariable = "INNERPEACE_SIGNING_KEY"

  /// The prefix of a base64-encoded key in the variable.
  static let base64Prefix = "base64:"

  /// The largest key file read; a key is 32 to a few hundred bytes.
  static let maximumFileBytes = 64 << 10

  /// The signer, or `nil` when neither the flag nor the variable gives a key.
  /// - Throws: ``CommandLineError`` for an unreadable or oversized file, invalid base64 or a key
  ///   too short.
  func signer(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> URLSigner? {
    let bytes: [UInt8]
    let source: String
    if let signingKeyFile {
      source = "--signing-key-file \(signingKeyFile)"
      bytes = try Self.read(signingKeyFile, source: source)
    } else if let value = environment[Self.environmentVariable] {
      source = Self.environmentVariable
      if value.hasPrefix(Self.base64Prefix) {
        let encoded = value.dropFirst(Self.base64Prefix.count).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let decoded = Data(base64Encoded: encoded) else {
          throw CommandLineError.usage("\(source): the key after '\(Self.base64Prefix)' is not valid base64")
        }
        bytes = Array(decoded)
      } else {
        bytes = Array(value.utf8)
      }
    } else {
      return nil
    }
    do {
      return try URLSigner(key: bytes)
    } catch {
      throw CommandLineError.usage("\(source): \(error.description)")
    }
  }

  /// A key file's bytes, at most ``maximumFileBytes``.
  static func read(_ path: String, source: String) throws -> [UInt8] {
    guard let handle = FileHandle(forReadingAtPath: path) else {
      throw CommandLineError.usage("\(source): cannot read the file")
    }
    defer { try? handle.close() }
    let data: Data?
    do {
      data = try handle.read(upToCount: maximumFileBytes + 1)
    } catch {
      throw CommandLineError.usage("\(source): cannot read the file")
    }
    let bytes = [UInt8](data ?? Data())
    guard bytes.count <= maximumFileBytes else {
      throw CommandLineError.usage(
        "\(source): the file is over \(maximumFileBytes >> 10) KiB; a key is 32 to a few hundred bytes")
    }
    return bytes
  }
}

/// `innerpeace sign URL`: the URL with its `signature` parameter, for servers run with a key.
struct SignCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "sign",
    abstract: "Print a URL signed for a server run with the same key.",
    discussion: """
      The signature is an HMAC-SHA256 with the key over the path and the query's parameters \
      (every one but signature, sorted, percent-encoded), as base64url; it is added as \
      signature=..., replacing any there. Give a full URL or a path with its query.
      """
  )

  @Argument(
    help: ArgumentHelp("The URL (https://host/card.png?text=Hi) or path (/card.png?text=Hi).", valueName: "url"))
  var url: String

  @OptionGroup var key: SigningKeyOptions

  func run() throws {
    guard let signer = try key.signer() else {
      throw CommandLineError.usage(
        "no signing key: give --signing-key-file or set \(SigningKeyOptions.environmentVariable)")
    }
    let (origin, pathAndQuery) = try Self.split(url)
    guard let signed = signer.sign(pathAndQuery) else {
      throw CommandLineError.usage("'\(url)': the query is not valid percent-encoded UTF-8")
    }
    try StandardStreams.writeOutput(origin + signed + "\n")
  }

  /// Splits `https://host[:port]/path?query` into its origin and the rest; a path starting with
  /// `/` has no origin. A fragment is refused (it never reaches the server).
  static func split(_ url: String) throws -> (origin: String, pathAndQuery: String) {
    guard !url.contains("#") else { throw CommandLineError.usage("'\(url)': a URL to sign has no #fragment") }
    if url.hasPrefix("/") { return ("", url) }
    for scheme in ["https://", "http://"] where url.lowercased().hasPrefix(scheme) {
      let rest = url.dropFirst(scheme.count)
      guard let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else {
        return (url, "/")
      }
      let path = rest[slash...]
      return (String(url.prefix(scheme.count)) + rest[..<slash], path.hasPrefix("?") ? "/" + path : String(path))
    }
    throw CommandLineError.usage("'\(url)' is neither a URL (https://...) nor a path (/...)")
  }
}
