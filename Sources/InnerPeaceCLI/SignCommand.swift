import ArgumentParser
import Foundation
import InnerPeaceServer

/// Where the URL-signing keys come from: `--signing-key-file` (repeatable), else
/// `INNERPEACE_SIGNING_KEY`.
///
/// A key is bytes: the file's bytes as they are (any binary), or the variable's text as UTF-8,
/// or, after a `base64:` prefix, the bytes the rest of the variable encodes in base64; surrounding
/// ASCII white space removed, at least 32 bytes left. A file given as `KEYID=PATH` names its key
/// ID; otherwise (and for the variable) the ID is derived from the key (``URLSigner/derivedKeyID(_:)``).
struct SigningKeyOptions: ParsableArguments {
  @Option(
    name: .customLong("signing-key-file"),
    help: ArgumentHelp(
      """
      A file holding a URL-signing key: its bytes, at least 32; KEYID=PATH names the key's ID. \
      Repeatable: the first signs, all verify. (else the variable INNERPEACE_SIGNING_KEY holds the key)
      """,
      valueName: "[keyid=]file"))
  var signingKeyFiles: [String] = []

  /// The variable that may hold the key itself.
  static let environmentVariable = "INNERPEACE_SIGNING_KEY"

  /// The prefix of a base64-encoded key in the variable.
  static let base64Prefix = "base64:"

  /// The largest key file read; a key is 32 to a few hundred bytes.
  static let maximumFileBytes = 64 << 10

  /// The keys, the signing one first, or `nil` when neither the flag nor the variable gives one.
  /// - Throws: ``CommandLineError`` for an unreadable or oversized file, invalid base64, a key
  ///   too short, an invalid key ID or two keys with one ID.
  func keys(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> SigningKeys? {
    var signers: [URLSigner] = []
    for file in signingKeyFiles {
      let source = "--signing-key-file \(file)"
      let (keyID, path) = Self.splitKeyID(file)
      do {
        signers.append(try URLSigner(key: try Self.read(path, source: source), keyID: keyID))
      } catch let error as URLSigner.KeyError {
        throw CommandLineError.usage("\(source): \(error.description)")
      }
    }
    if signingKeyFiles.isEmpty {
      guard let value = environment[Self.environmentVariable] else { return nil }
      let source = Self.environmentVariable
      let bytes: [UInt8]
      if value.hasPrefix(Self.base64Prefix) {
        let encoded = value.dropFirst(Self.base64Prefix.count).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let decoded = Data(base64Encoded: encoded) else {
          throw CommandLineError.usage("\(source): the key after '\(Self.base64Prefix)' is not valid base64")
        }
        bytes = Array(decoded)
      } else {
        bytes = Array(value.utf8)
      }
      do {
        signers.append(try URLSigner(key: bytes))
      } catch {
        throw CommandLineError.usage("\(source): \(error.description)")
      }
    }
    do {
      return try SigningKeys(signers)
    } catch {
      throw CommandLineError.usage("--signing-key-file: \(error.description)")
    }
  }

  /// `KEYID=PATH` as its ID and path: the part before the first `=` is an ID when it is a valid
  /// one (``URLSigner/isValidKeyID(_:)``, so never holding a `/`); else the whole is the path.
  static func splitKeyID(_ argument: String) -> (keyID: String?, path: String) {
    guard let equals = argument.firstIndex(of: "="), URLSigner.isValidKeyID(argument[..<equals]) else {
      return (nil, argument)
    }
    return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
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
    usage: "innerpeace sign <url> [--signing-key-file <[keyid=]file> ...] [<options>]",
    discussion: """
      The signature is an HMAC-SHA256 with the key over the path and the query's parameters \
      (every one but signature, sorted, percent-encoded), as base64url; it is added as \
      signature=..., after kid=KEYID (the key's ID) and, with --expires-in or --expires-at, \
      expires=UNIX-TIME, replacing any there. Give a full URL or a path with its query.
      """
  )

  @Argument(
    help: ArgumentHelp("The URL (https://host/card.png?text=Hi) or path (/card.png?text=Hi).", valueName: "url"))
  var url: String

  @OptionGroup var key: SigningKeyOptions

  @Option(
    name: .customLong("key-id"),
    help: ArgumentHelp("Sign with the key of this ID. (default: the first key)", valueName: "keyid"))
  var keyID: String?

  @Option(
    name: .customLong("expires-in"),
    help: ArgumentHelp(
      "The URL expires this long from now: a whole number with s, m, h or d (7d).", valueName: "duration"))
  var expiresIn: String?

  @Option(
    name: .customLong("expires-at"),
    help: ArgumentHelp("The URL expires at this Unix time, in seconds.", valueName: "unix-time"))
  var expiresAt: Int?

  func run() throws {
    guard let keys = try key.keys() else {
      throw CommandLineError.usage(
        "no signing key: give --signing-key-file or set \(SigningKeyOptions.environmentVariable)")
    }
    var signer = keys.signing
    if let keyID {
      guard let chosen = keys.keys.first(where: { $0.keyID == keyID }) else {
        let known = keys.keys.map(\.keyID).joined(separator: ", ")
        throw CommandLineError.usage("--key-id \(keyID): no key has that ID (the keys: \(known))")
      }
      signer = chosen
    }
    let expires = try expiry(now: Date())
    let (origin, pathAndQuery) = try Self.split(url)
    guard let signed = signer.sign(pathAndQuery, expires: expires) else {
      throw CommandLineError.usage("'\(url)': the query is not valid percent-encoded UTF-8")
    }
    try StandardStreams.writeOutput(origin + signed + "\n")
  }

  /// The Unix time of `--expires-at`, or `now` plus `--expires-in`; `nil` for neither.
  func expiry(now: Date) throws -> Int? {
    switch (expiresIn, expiresAt) {
    case (nil, nil): return nil
    case (.some, .some): throw CommandLineError.usage("give --expires-in or --expires-at, not both")
    case (nil, .some(let at)):
      guard (0...SigningKeys.latestExpiry).contains(at) else {
        throw CommandLineError.usage("--expires-at \(at) must be a Unix time from 0 to \(SigningKeys.latestExpiry)")
      }
      return at
    case (.some(let text), nil):
      guard let seconds = Self.seconds(text) else {
        throw CommandLineError.usage("--expires-in '\(text)' must be a whole number with s, m, h or d, e.g. 7d")
      }
      let at = Int(now.timeIntervalSince1970) + seconds
      guard at <= SigningKeys.latestExpiry else {
        throw CommandLineError.usage("--expires-in '\(text)' ends after the year 9999")
      }
      return at
    }
  }

  /// `90s`, `15m`, `12h` or `7d` in seconds; `nil` for anything else (or over 100 years).
  static func seconds(_ duration: String) -> Int? {
    let units = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
    guard let unit = duration.last.flatMap({ units[String($0)] }) else { return nil }
    let number = duration.dropLast()
    guard (1...6).contains(number.utf8.count), number.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
      let value = Int(number), value * unit <= 100 * 366 * 86_400
    else { return nil }
    return value * unit
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
