import ArgumentParser
import Foundation
import InnerPeaceServer

/// Where the URL-signing key comes from: `--signing-key-file`, else `INNERPEACE_SIGNING_KEY`.
struct SigningKeyOptions: ParsableArguments {
  @Option(
    name: .customLong("signing-key-file"),
    help: ArgumentHelp(
      "A file holding the URL-signing key (at least 32 bytes; else the variable INNERPEACE_SIGNING_KEY holds the key).",
      valueName: "file"))
  var signingKeyFile: String?

  /// The variable that may hold the key itself.
  static let environmentVariable = "INNERPEACE_SIGNING_KEY"

  /// The signer, or `nil` when neither the flag nor the variable gives a key.
  /// - Throws: ``CommandLineError`` for an unreadable file or a key too short.
  func signer(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> URLSigner? {
    let text: String
    let source: String
    if let signingKeyFile {
      guard let data = FileManager.default.contents(atPath: signingKeyFile) else {
        throw CommandLineError.usage("--signing-key-file \(signingKeyFile): cannot read the file")
      }
      text = String(decoding: data, as: UTF8.self)
      source = "--signing-key-file \(signingKeyFile)"
    } else if let value = environment[Self.environmentVariable] {
      text = value
      source = Self.environmentVariable
    } else {
      return nil
    }
    do {
      return try URLSigner(key: text)
    } catch {
      throw CommandLineError.usage("\(source): \(error.description)")
    }
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
