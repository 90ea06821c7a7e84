import InnerPeace
import InnerPeaceQuery

/// Query parameters, decoded strictly by ``QueryString`` (valid UTF-8, no NUL), with a refusal
/// as a 400 naming the parameter.
struct QueryParameters: Sendable {
  private let query: QueryString

  /// Parses a raw query (the part after `?`, without it).
  /// - Throws: ``ServiceError`` (400) naming the parameter whose value is not valid UTF-8 or holds NUL.
  init(raw: Substring) throws(ServiceError) {
    do {
      query = try QueryString(raw: raw)
    } catch {
      throw .badParameter(error.parameter, error.reason)
    }
  }

  subscript(name: String) -> String? { query[name] }

  /// Every parameter name the query gives.
  var names: Dictionary<String, String>.Keys { query.values.keys }

  /// The first name the query gives more than once, if any.
  var repeatedName: String? { query.repeatedName }

  /// A whole-number parameter (``InnerPeace/WholeNumber``) within `range`; `nil` when absent.
  /// - Throws: ``ServiceError`` (400) naming the parameter for any other value.
  func wholeNumber(_ name: String, in range: ClosedRange<Int>) throws(ServiceError) -> Int? {
    guard let text = self[name] else { return nil }
    guard let value = WholeNumber(text)?.value, range.contains(value) else {
      let upper = range.upperBound == Int.max ? "" : " to \(range.upperBound)"
      throw .badParameter(name, "\(name) must be a whole number from \(range.lowerBound)\(upper)")
    }
    return value
  }
}
