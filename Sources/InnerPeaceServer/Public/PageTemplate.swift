/// An HTML template with `{{name}}` slots, split once (at start-up) into its literal pieces and
/// the slots between them, so filling it in is one pass that copies text.
struct PageTemplate<Slot: RawRepresentable & CaseIterable & Sendable>: Sendable where Slot.RawValue == String {
  /// A run of the template: text copied as it is, or a slot filled in.
  enum Piece: Sendable {
    case text(String)
    case slot(Slot)
  }

  /// Why a template's text cannot be used.
  enum ParseError: Error, Equatable, CustomStringConvertible {
    /// `{{` without its `}}`.
    case unclosedSlot(offset: Int)
    /// A slot whose name is none of `Slot`'s.
    case unknownSlot(String)
    /// A slot the page needs that the template never names.
    case missingSlot(String)

    var description: String {
      switch self {
      case .unclosedSlot(let offset): "a slot opened at character \(offset) is never closed"
      case .unknownSlot(let name): "no such slot: {{\(name)}}"
      case .missingSlot(let name): "the slot {{\(name)}} is missing"
      }
    }
  }

  /// The pieces in order.
  let pieces: [Piece]

  /// Splits `text` at its slots; every slot `Slot` names must appear at least once.
  init(_ text: String) throws(ParseError) {
    var pieces: [Piece] = []
    var named = Set<String>()
    var rest = Substring(text)
    while let open = rest.range(of: "{{") {
      guard let close = rest[open.upperBound...].range(of: "}}") else {
        throw .unclosedSlot(offset: text.distance(from: text.startIndex, to: open.lowerBound))
      }
      let name = String(rest[open.upperBound..<close.lowerBound])
      guard let slot = Slot(rawValue: name) else { throw .unknownSlot(name) }
      if open.lowerBound > rest.startIndex { pieces.append(.text(String(rest[..<open.lowerBound]))) }
      pieces.append(.slot(slot))
      named.insert(name)
      rest = rest[close.upperBound...]
    }
    if !rest.isEmpty { pieces.append(.text(String(rest))) }
    if let missing = Slot.allCases.first(where: { !named.contains($0.rawValue) }) {
      throw .missingSlot(missing.rawValue)
    }
    self.pieces = pieces
  }

  /// The template with each slot replaced by `value(slot)`, inserted as it is (escaping is the
  /// caller's).
  func render(_ value: (Slot) -> String) -> String {
    var output = ""
    for piece in pieces {
      switch piece {
      case .text(let text): output += text
      case .slot(let slot): output += value(slot)
      }
    }
    return output
  }
}
