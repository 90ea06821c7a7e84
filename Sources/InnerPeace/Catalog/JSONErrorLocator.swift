/// Finds where JSON text first goes wrong, as a 1-based line and column, so a catalog error can
/// point at it. Foundation's parser says only that the data is invalid.
enum JSONErrorLocator {
  struct Position: Equatable {
    var line: Int
    var column: Int
    var reason: String
  }

  private struct Failure: Error {
    let offset: Int
    let reason: String
  }

  /// The first syntax error in `bytes`; if the text is valid JSON, the position just past it.
  static func locate(in bytes: [UInt8]) -> Position {
    firstProblem(in: bytes) ?? position(of: Failure(offset: bytes.count, reason: "invalid JSON"), in: bytes)
  }

  /// The first syntax error or duplicated object key in `bytes` (RFC 8259 leaves a duplicate's
  /// meaning open, and Foundation silently keeps one of the two), or `nil` for JSON without either.
  static func firstProblem(in bytes: [UInt8]) -> Position? {
    var parser = Parser(bytes: bytes)
    do {
      parser.skipSpace()
      try parser.value(depth: 0)
      parser.skipSpace()
      if parser.offset < bytes.count {
        return position(of: Failure(offset: parser.offset, reason: "unexpected text after the JSON value"), in: bytes)
      }
      return nil
    } catch {
      return position(of: error, in: bytes)
    }
  }

  private static func position(of failure: Failure, in bytes: [UInt8]) -> Position {
    var line = 1
    var column = 1
    var index = 0
    while index < min(failure.offset, bytes.count) {
      if bytes[index] == 0x0A {
        line += 1
        column = 1
      } else if bytes[index] & 0xC0 != 0x80 {
        column += 1
      }
      index += 1
    }
    return Position(line: line, column: column, reason: failure.reason)
  }

  private struct Parser {
    let bytes: [UInt8]
    var offset = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    var current: UInt8? { offset < bytes.count ? bytes[offset] : nil }

    mutating func skipSpace() {
      while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { offset += 1 }
    }

    func fail(_ reason: String) -> Failure { Failure(offset: offset, reason: reason) }

    /// The value of a JSON string literal already checked by ``string()``, quotes included, with
    /// its escapes resolved, so `"text"` and `"te\u0078t"` are the same key.
    static func decodedString(_ literal: ArraySlice<UInt8>) -> String {
      let body = literal.dropFirst().dropLast()
      guard body.contains(UInt8(ascii: "\\")) else { return String(decoding: body, as: UTF8.self) }
      var index = body.startIndex
      func hexValue(_ at: Int) -> UInt16 {
        body[at..<at + 4].reduce(0) { value, byte in
          value << 4 | UInt16(Character(Unicode.Scalar(byte)).hexDigitValue ?? 0)
        }
      }
      var utf16: [UInt16] = []
      while index < body.endIndex {
        let byte = body[index]
        if byte != UInt8(ascii: "\\") {
          // Copy one UTF-8 sequence as UTF-16.
          var end = index + 1
          while end < body.endIndex && body[end] & 0xC0 == 0x80 { end += 1 }
          utf16.append(contentsOf: String(decoding: body[index..<end], as: UTF8.self).utf16)
          index = end
          continue
        }
        let escaped = body[index + 1]
        index += 2
        switch escaped {
        case UInt8(ascii: "u"):
          utf16.append(hexValue(index))
          index += 4
        case UInt8(ascii: "b"): utf16.append(0x08)
        case UInt8(ascii: "f"): utf16.append(0x0C)
        case UInt8(ascii: "n"): utf16.append(0x0A)
        case UInt8(ascii: "r"): utf16.append(0x0D)
        case UInt8(ascii: "t"): utf16.append(0x09)
        default: utf16.append(UInt16(escaped))
        }
      }
      return String(decoding: utf16, as: UTF16.self)
    }

    mutating func value(depth: Int) throws(Failure) {
      guard depth < 512 else { throw fail("nesting is too deep") }
      guard let byte = current else { throw fail("unexpected end of file") }
      switch byte {
      case UInt8(ascii: "{"): try object(depth: depth)
      case UInt8(ascii: "["): try array(depth: depth)
      case UInt8(ascii: "\""): try string()
      case UInt8(ascii: "t"): try literal("true")
      case UInt8(ascii: "f"): try literal("false")
      case UInt8(ascii: "n"): try literal("null")
      case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
      default: throw fail("unexpected character '\(Character(Unicode.Scalar(byte)))'")
      }
    }

    mutating func literal(_ word: String) throws(Failure) {
      for expected in word.utf8 {
        guard current == expected else { throw fail("invalid literal, expected '\(word)'") }
        offset += 1
      }
    }

    /// RFC 8259: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
    mutating func number() throws(Failure) {
      func isDigit(_ byte: UInt8?) -> Bool { byte.map { (0x30...0x39).contains($0) } ?? false }
      if current == UInt8(ascii: "-") { offset += 1 }
      guard isDigit(current) else { throw fail("invalid number") }
      if current == UInt8(ascii: "0") {
        offset += 1
        if isDigit(current) { throw fail("invalid number: leading zero") }
      } else {
        while isDigit(current) { offset += 1 }
      }
      if current == UInt8(ascii: ".") {
        offset += 1
        guard isDigit(current) else { throw fail("invalid number: expected a digit after '.'") }
        while isDigit(current) { offset += 1 }
      }
      if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
        offset += 1
        if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { offset += 1 }
        guard isDigit(current) else { throw fail("invalid number: expected an exponent") }
        while isDigit(current) { offset += 1 }
      }
    }

    mutating func string() throws(Failure) {
      offset += 1
      while let byte = current {
        switch byte {
        case UInt8(ascii: "\""):
          offset += 1
          return
        case UInt8(ascii: "\\"):
          offset += 1
          guard let escaped = current, Array("\"\\/bfnrtu".utf8).contains(escaped) else {
            throw fail("invalid escape in string")
          }
          offset += 1
          if escaped == UInt8(ascii: "u") {
            for _ in 0..<4 {
              guard let hex = current, Character(Unicode.Scalar(hex)).isHexDigit else {
                throw fail("invalid \\u escape: expected four hex digits")
              }
              offset += 1
            }
          }
        case 0x00..<0x20:
          throw fail("control character in string (a raw line break? use \\n)")
        default:
          offset += 1
        }
      }
      throw fail("unterminated string")
    }

    mutating func array(depth: Int) throws(Failure) {
      offset += 1
      skipSpace()
      if current == UInt8(ascii: "]") {
        offset += 1
        return
      }
      while true {
        skipSpace()
        try value(depth: depth + 1)
        skipSpace()
        switch current {
        case UInt8(ascii: ","): offset += 1
        case UInt8(ascii: "]"):
          offset += 1
          return
        case nil: throw fail("unexpected end of file in array")
        default: throw fail("expected ',' or ']' in array")
        }
      }
    }

    mutating func object(depth: Int) throws(Failure) {
      offset += 1
      skipSpace()
      if current == UInt8(ascii: "}") {
        offset += 1
        return
      }
      var keys: Set<String> = []
      while true {
        skipSpace()
        guard current == UInt8(ascii: "\"") else { throw fail("expected a \"key\" in object") }
        let keyStart = offset
        try string()
        let key = Parser.decodedString(bytes[keyStart..<offset])
        guard keys.insert(key).inserted else {
          throw Failure(offset: keyStart, reason: "duplicate key \"\(key)\" in object")
        }
        skipSpace()
        guard current == UInt8(ascii: ":") else { throw fail("expected ':' after key") }
        offset += 1
        skipSpace()
        try value(depth: depth + 1)
        skipSpace()
        switch current {
        case UInt8(ascii: ","): offset += 1
        case UInt8(ascii: "}"):
          offset += 1
          return
        case nil: throw fail("unexpected end of file in object")
        default: throw fail("expected ',' or '}' in object")
        }
      }
    }
  }
}
