/// `/quotes/{index}` and each entry of `/quotes`.
struct QuoteResponse: Codable, Sendable {
  let index: Int
  let text: String
  let author: String
  let shareMessage: String
  /// The absolute, versioned URL of the quote's og card.
  let imageURL: String
  /// The absolute URL of the quote's page (link previews).
  let pageURL: String
}
