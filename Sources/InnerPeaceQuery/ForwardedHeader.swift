/// The forwarding headers as a proxy chain writes them (`X-Forwarded-For`, `X-Forwarded-Host`,
/// `X-Forwarded-Proto` and RFC 7239's `Forwarded`): each proxy appends its value, so the last one
/// is the nearest proxy's, the only one a trusted proxy vouches for.
///
/// Pure Swift with no dependency, like ``QueryString``, so the query fuzz target reaches it.
public enum ForwardedHeader {
  /// The last element of a comma-separated list spread over one or more fields, without the
  /// spaces and tabs around it; `nil` when there is none, or it is empty.
  public static func lastValue(_ fields: [String]) -> String? {
    guard let field = fields.last else { return nil }
    let bytes = Array(field.utf8)
    let start = bytes.lastIndex(of: UInt8(ascii: ",")).map { $0 + 1 } ?? 0
    let value = trimmed(bytes[start...])
    return value.isEmpty ? nil : String(decoding: value, as: UTF8.self)
  }

  /// The parameters (lowercased names, unquoted values) of the last element of the `Forwarded`
  /// fields (RFC 7239 §4): `for=1.2.3.4;proto=https;host="a.example"`. Commas and semicolons
  /// inside quoted strings are not separators; the first of two equal names wins. Empty when
  /// there is no element.
  public static func lastElement(_ fields: [String]) -> [String: String] {
    guard let field = fields.last else { return [:] }
    let element = split(Array(field.utf8)[...], at: UInt8(ascii: ",")).last ?? []
    var parameters: [String: String] = [:]
    for pair in split(element, at: UInt8(ascii: ";")) {
      guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { continue }
      let name = String(decoding: trimmed(pair[..<equals]), as: UTF8.self).lowercased()
      var value = Array(trimmed(pair[(equals + 1)...]))
      if value.count >= 2, value.first == UInt8(ascii: "\""), value.last == UInt8(ascii: "\"") {
        var unquoted: [UInt8] = []
        var escape = false
        for byte in value.dropFirst().dropLast() {
          if !escape && byte == UInt8(ascii: "\\") {
            escape = true
            continue
          }
          escape = false
          unquoted.append(byte)
        }
        value = unquoted
      }
      if !name.isEmpty, parameters[name] == nil { parameters[name] = String(decoding: value, as: UTF8.self) }
    }
    return parameters
  }

  /// `bytes` split at `separator` outside quoted strings.
  private static func split(_ bytes: ArraySlice<UInt8>, at separator: UInt8) -> [ArraySlice<UInt8>] {
    var parts: [ArraySlice<UInt8>] = []
    var start = bytes.startIndex
    var quoted = false
    var escaped = false
    for index in bytes.indices {
      let byte = bytes[index]
      if escaped {
        escaped = false
      } else if quoted && byte == UInt8(ascii: "\\") {
        escaped = true
      } else if byte == UInt8(ascii: "\"") {
        quoted.toggle()
      } else if byte == separator, !quoted {
        parts.append(bytes[start..<index])
        start = index + 1
      }
    }
    parts.append(bytes[start...])
    return parts
  }

  /// `bytes` without the spaces and tabs at either end.
  private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
    guard let first = bytes.firstIndex(where: { !isBlank($0) }) else { return [] }
    let last = bytes.lastIndex(where: { !isBlank($0) })!
    return bytes[first...last]
  }
}
