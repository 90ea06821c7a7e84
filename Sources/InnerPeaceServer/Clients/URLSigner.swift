import Crypto
import Foundation
import InnerPeaceQuery

/// Signs request URLs and checks their signatures, in the style of imgproxy: an HMAC-SHA256, with
/// the operator's key, over the path and the canonical query.
///
/// The signed message is `path + "?" + canonical query`, where the path is exactly as requested
/// (still percent-encoded) and the canonical query is every parameter except `signature`, sorted
/// by name and then value, each name and value percent-encoded with everything but RFC 3986's
/// unreserved characters (`A-Z a-z 0-9 - . _ ~`) escaped, joined with `=` and `&`. The signature
/// travels as the query parameter `signature`, in base64url without padding (43 characters), and
/// is accepted in that canonical spelling only. So the order and the escaping of the parameters a
/// site sends do not matter; their names, values and the path do.
///
/// The key is bytes: a key file's bytes as they are, or a text's UTF-8 bytes, without surrounding
/// ASCII white space (what Python's `bytes.strip()` removes).
///
/// Each key has an ID, sent as the parameter `kid` of the URLs it signs (and so covered by the
/// signature), so that a server holding several keys (``SigningKeys``) knows which one to check
/// with. Unless the operator names it, the ID is the first 8 hexadecimal digits of the key's
/// SHA-256 (``derivedKeyID(_:)``): it stays the same whatever the key file is called, and reveals
/// nothing usable about a key of 32 bytes or more.
public struct URLSigner: Sendable {
  private let key: SymmetricKey
  /// The key's ID, sent as `kid`.
  public let keyID: String

  /// The fewest bytes a key may have.
  public static let minimumKeyBytes = 32

  /// Why a key is refused.
  public enum KeyError: Error, Sendable, Equatable, CustomStringConvertible {
    case tooShort(bytes: Int)
    case keyIDInvalid(String)

    public var description: String {
      switch self {
      case .tooShort(let bytes):
        "the signing key has \(bytes) bytes; it needs at least \(URLSigner.minimumKeyBytes) (e.g. openssl rand -hex 32)"
      case .keyIDInvalid(let id):
        "the key ID '\(id)' must be 1 to \(URLSigner.maximumKeyIDLength) characters of A-Z a-z 0-9 . _ -"
      }
    }
  }

  /// The longest key ID.
  public static let maximumKeyIDLength = 64

  /// Whether `id` may be a key ID: 1 to ``maximumKeyIDLength`` characters of `A-Z a-z 0-9 . _ -`
  /// (unreserved in a URL, so `kid=` needs no escaping).
  public static func isValidKeyID(_ id: some StringProtocol) -> Bool {
    (1...maximumKeyIDLength).contains(id.utf8.count)
      && id.utf8.allSatisfy { byte in
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
          UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
          true
        default: false
        }
      }
  }

  /// The ID of a key (its bytes, white space already removed) when the operator names none: the
  /// first 8 hexadecimal digits of its SHA-256 (Python: `hashlib.sha256(key).hexdigest()[:8]`).
  public static func derivedKeyID(_ trimmedKey: [UInt8]) -> String {
    SHA256.hash(data: trimmedKey).prefix(4).map { byte in
      let digits = Array("0123456789abcdef")
      return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }.joined()
  }

  /// A signer with `bytes` (a key file's content) as the key, surrounding ASCII white space
  /// (space, tab, line feed, vertical tab, form feed, carriage return) removed; every other byte
  /// counts as it is, whether or not the whole is UTF-8.
  /// `keyID` names the key (``isValidKeyID(_:)``); `nil` derives it (``derivedKeyID(_:)``).
  /// - Throws: ``KeyError`` for a key shorter than ``minimumKeyBytes`` bytes or an invalid ID.
  public init(key bytes: [UInt8], keyID: String? = nil) throws(KeyError) {
    let trimmed = Self.trimmingASCIIWhiteSpace(bytes)
    guard trimmed.count >= Self.minimumKeyBytes else { throw .tooShort(bytes: trimmed.count) }
    if let keyID, !Self.isValidKeyID(keyID) { throw .keyIDInvalid(keyID) }
    key = SymmetricKey(data: trimmed)
    self.keyID = keyID ?? Self.derivedKeyID(trimmed)
  }

  /// A signer with `text`'s UTF-8 bytes as the key, surrounding ASCII white space removed.
  /// - Throws: ``KeyError`` for a key shorter than ``minimumKeyBytes`` bytes or an invalid ID.
  public init(key text: String, keyID: String? = nil) throws(KeyError) {
    try self.init(key: Array(text.utf8), keyID: keyID)
  }

  /// `bytes` without the ASCII white space at either end.
  static func trimmingASCIIWhiteSpace(_ bytes: [UInt8]) -> [UInt8] {
    func isWhiteSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
    guard let first = bytes.firstIndex(where: { !isWhiteSpace($0) }),
      let last = bytes.lastIndex(where: { !isWhiteSpace($0) })
    else { return [] }
    return Array(bytes[first...last])
  }

  /// The signature of `path` with the decoded query `parameters` (any `signature` is left out).
  public func signature(path: String, parameters: [(name: String, value: String)]) -> String {
    let code = HMAC<SHA256>.authenticationCode(
      for: Array(Self.message(path: path, parameters: parameters).utf8), using: key)
    return Self.base64URL(Array(code))
  }

  /// Whether `signature` is the signature of `path` with `parameters`, compared in constant time.
  public func isValid(signature: String, path: String, parameters: [(name: String, value: String)]) -> Bool {
    guard let code = Self.decodeBase64URL(signature) else { return false }
    return HMAC<SHA256>.isValidAuthenticationCode(
      code, authenticating: Array(Self.message(path: path, parameters: parameters).utf8), using: key)
  }

  /// `pathAndQuery` (a path with an optional raw query) signed: its `kid` parameter set to
  /// ``keyID``, its `expires` to `expires` (Unix seconds; with `nil`, any is kept), and its
  /// `signature` appended; any existing `kid` and `signature` are replaced, the other parameters
  /// are kept as written.
  /// - Returns: `nil` when the query does not decode (invalid percent-encoding or UTF-8).
  public func sign(_ pathAndQuery: String, expires: Int? = nil) -> String? {
    let (path, rawQuery) = Self.split(pathAndQuery)
    var replaced: Set<String> = ["signature", "kid"]
    if expires != nil { replaced.insert("expires") }
    var kept: [Substring] = []
    for pair in rawQuery.split(separator: "&", omittingEmptySubsequences: true) {
      let name = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
      guard let decoded = QueryString.decode(name) else { return nil }
      if !replaced.contains(decoded) { kept.append(pair) }
    }
    var added = ["kid=\(keyID)"]
    if let expires { added.append("expires=\(expires)") }
    let query = (kept.map(String.init) + added).joined(separator: "&")
    guard let parameters = Self.parameters(Substring(query)) else { return nil }
    return path + "?" + query + "&signature=\(signature(path: path, parameters: parameters))"
  }

  /// The signed message.
  static func message(path: String, parameters: [(name: String, value: String)]) -> String {
    var pairs: [(name: String, value: String)] = []
    for parameter in parameters where parameter.name != "signature" {
      pairs.append((InnerPeaceServer.percentEncoded(parameter.name), InnerPeaceServer.percentEncoded(parameter.value)))
    }
    pairs.sort { first, second in first.name != second.name ? first.name < second.name : first.value < second.value }
    let canonical: [String] = pairs.map { pair in pair.name + "=" + pair.value }
    return path + "?" + canonical.joined(separator: "&")
  }

  /// Splits a request target at its first `?`.
  static func split(_ pathAndQuery: String) -> (path: String, query: Substring) {
    guard let mark = pathAndQuery.firstIndex(of: "?") else { return (pathAndQuery, "") }
    return (String(pathAndQuery[..<mark]), pathAndQuery[pathAndQuery.index(after: mark)...])
  }

  /// Every parameter of a raw query, decoded, in order (repeats kept); `nil` if one does not decode.
  static func parameters(_ rawQuery: Substring) -> [(name: String, value: String)]? {
    var parameters: [(name: String, value: String)] = []
    for pair in rawQuery.split(separator: "&", omittingEmptySubsequences: true) {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      guard let name = QueryString.decode(parts[0]), let value = QueryString.decode(parts.count > 1 ? parts[1] : "")
      else { return nil }
      parameters.append((name, value))
    }
    return parameters
  }

  static func base64URL(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString()
      .replacingOccurrences(of: "+", with: "-")
      .replacingOccurrences(of: "/", with: "_")
      .replacingOccurrences(of: "=", with: "")
  }

  /// Decodes base64url without padding; `nil` for anything else: only the canonical 43-character
  /// form of 32 bytes is a signature (its last character carries 4 bits; the other 2 must be zero,
  /// so a signature has one spelling, not four).
  static func decodeBase64URL(_ text: String) -> [UInt8]? {
    guard text.utf8.count == 43,
      text.utf8.allSatisfy({ byte in
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
          UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
          return true
        default: return false
        }
      })
    else { return nil }
    let standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "="
    guard let bytes = Data(base64Encoded: standard).map(Array.init), base64URL(bytes) == text else { return nil }
    return bytes
  }
}
