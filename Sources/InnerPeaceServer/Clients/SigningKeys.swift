public import Foundation

/// The service's signing keys: the first signs the URLs the service hands out, every one
/// verifies. So a key is rotated without downtime: add the new key second, deploy; move it first,
/// deploy; drop the old one once the URLs it signed are no longer wanted.
///
/// A URL names its key with `kid`; one without (signed before keys had IDs) is checked against
/// every key. An `expires` (Unix seconds), covered by the signature like every parameter, ends
/// the URL's life.
public struct SigningKeys: Sendable {
  /// Every key, the signing one first; never empty.
  public let keys: [URLSigner]

  /// The key that signs.
  public var signing: URLSigner { keys[0] }

  /// The largest `expires`: the last second of the year 9999.
  public static let latestExpiry = 253_402_300_799

  /// Why a set of keys is refused.
  public enum KeysError: Error, Sendable, Equatable, CustomStringConvertible {
    case none
    case duplicateKeyID(String)

    public var description: String {
      switch self {
      case .none: "no signing key"
      case .duplicateKeyID(let id): "two signing keys have the ID '\(id)'"
      }
    }
  }

  /// - Throws: ``KeysError`` for no key, or two with one ID.
  public init(_ keys: [URLSigner]) throws(KeysError) {
    guard !keys.isEmpty else { throw .none }
    var seen: Set<String> = []
    for key in keys where !seen.insert(key.keyID).inserted { throw .duplicateKeyID(key.keyID) }
    self.keys = keys
  }

  /// What a URL's signature parameters amount to.
  public enum Verdict: Sendable, Equatable {
    case valid
    /// No `signature`.
    case missing
    /// The signature is not that of this URL with the key it names (or with any key).
    case mismatch
    /// `kid` is not a key ID (``URLSigner/isValidKeyID(_:)``).
    case keyIDInvalid
    /// `kid` names no key of the service.
    case keyUnknown(String)
    /// `expires` is not a whole number of seconds from 0 to ``latestExpiry``.
    case expiryInvalid
    /// A valid signature whose `expires` has passed.
    case expired(at: Int)
  }

  /// Checks the signature of `path` with the decoded query `parameters` (in order, repeats kept)
  /// at the time `now`: the key named by `kid` (or any, without one), then `expires`, which is
  /// judged only once the signature holds, so a URL is only ever called expired by its signer.
  public func verify(path: String, parameters: [(name: String, value: String)], now: Date) -> Verdict {
    var expiry: Int?
    switch Occurrence(of: "expires", in: parameters) {
    case .absent: expiry = nil
    case .repeated: return .expiryInvalid
    case .once(let text):
      guard text.utf8.count <= 12, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let seconds = Int(text),
        seconds <= Self.latestExpiry
      else { return .expiryInvalid }
      expiry = seconds
    }
    let candidates: [URLSigner]
    switch Occurrence(of: "kid", in: parameters) {
    case .absent: candidates = keys
    case .repeated: return .keyIDInvalid
    case .once(let id):
      guard URLSigner.isValidKeyID(id) else { return .keyIDInvalid }
      guard let key = keys.first(where: { $0.keyID == id }) else { return .keyUnknown(id) }
      candidates = [key]
    }
    let signature: String
    switch Occurrence(of: "signature", in: parameters) {
    case .absent: return .missing
    case .repeated: return .mismatch
    case .once(let value): signature = value
    }
    guard candidates.contains(where: { $0.isValid(signature: signature, path: path, parameters: parameters) }) else {
      return .mismatch
    }
    if let expiry, Double(expiry) <= now.timeIntervalSince1970 { return .expired(at: expiry) }
    return .valid
  }

  /// `cacheControl` for a signed URL that expires in `secondsLeft`: its `max-age` and
  /// `s-maxage` at most that, and no `immutable`, so that no cache serves the URL after it has
  /// expired. A policy without a lifetime (`no-store`) is kept as it is.
  public static func cacheControl(_ cacheControl: String, expiringIn secondsLeft: Int) -> String {
    let left = max(0, secondsLeft)
    let directives = cacheControl.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    return directives.compactMap { directive -> String? in
      if directive.lowercased() == "immutable" { return nil }
      for name in ["max-age=", "s-maxage="] where directive.lowercased().hasPrefix(name) {
        let seconds = Int(directive.dropFirst(name.count)) ?? 0
        return name + String(min(seconds, left))
      }
      return directive
    }.joined(separator: ", ")
  }

  /// How often a parameter is given.
  private enum Occurrence {
    case absent, once(String), repeated

    init(of name: String, in parameters: [(name: String, value: String)]) {
      let values = parameters.lazy.filter { $0.name == name }.map { $0.value }
      var iterator = values.makeIterator()
      guard let first = iterator.next() else {
        self = .absent
        return
      }
      self = iterator.next() == nil ? .once(first) : .repeated
    }
  }

  /// `expires` as the time it names, e.g. `2026-11-27T00:00:00Z`.
  public static func timestamp(_ unixSeconds: Int) -> String {
    ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(unixSeconds)))
  }
}
