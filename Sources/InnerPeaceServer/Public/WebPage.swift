/// The page at `/`: the Inner Peace app on the web.
enum WebPage {
  /// What one page shows and says: its link-preview tags, the card it opens on, and the image a
  /// crawler or a browser without script gets.
  struct Content {
    /// `<title>` and `og:title`.
    var title: String
    /// `description`, `og:description`: the share message.
    var description: String
    /// The page's own absolute URL (`og:url`, canonical).
    var url: String
    /// The absolute, versioned og card (JPEG, 1200x630).
    var image: String
    /// `og:image:alt`: the quote and its author.
    var imageAlt: String
    /// The card the page opens on, without size or format (`/cards/3?picture=aqua.jpg`,
    /// `/today`); the script adds the window's size. Empty: the page keeps the og card and
    /// fetches nothing (a server that answers signed image URLs only).
    var firstCard: String
    /// The first card's quote page (`/q/3`), for Share.
    var firstPage: String
  }

  /// The template's slots (`{{name}}` in `Resources/page/index.html`).
  enum Slot: String, CaseIterable, Sendable {
    case title, description, url, image, imageAlt, firstCard, firstPage
    /// The card's image before the script runs (``firstImage(_:)``), HTML as it is.
    case cardImage
    /// The style sheet and the script, inlined as they are.
    case style, script
  }

  /// The page for `content` from `assets`' template, every value HTML-escaped.
  static func html(_ content: Content, assets: PageAssets) -> String {
    assets.template.render { slot in
      switch slot {
      case .title: Markup.escaped(content.title)
      case .description: Markup.escaped(content.description)
      case .url: Markup.escaped(content.url)
      case .image: Markup.escaped(content.image)
      case .imageAlt: Markup.escaped(content.imageAlt)
      case .firstCard: Markup.escaped(content.firstCard)
      case .firstPage: Markup.escaped(content.firstPage)
      case .cardImage: firstImage(content)
      case .style: assets.style
      case .script: assets.script
      }
    }
  }

  /// The card's `<img>` before the script runs. With a first card to fetch, it has no source:
  /// the first paint is the dark page, the window's shape, and the script asks for the card of
  /// the window's size before any image is requested, so a phone never shows the landscape og
  /// card cropped to portrait (words cut at both sides); a browser without script gets the og
  /// card, whole (`contain`). Without a first card (a server that answers signed image URLs
  /// only) the og card is the card, whole as well.
  static func firstImage(_ content: Content) -> String {
    let alt = Markup.escaped(content.imageAlt)
    let og = "class=\"og\" alt=\"\(alt)\" src=\"\(Markup.escaped(content.image))\""
    if content.firstCard.isEmpty { return "<img id=\"quote\" \(og)>" }
    return "<img id=\"quote\" alt=\"\(alt)\">\n<noscript><img \(og)></noscript>"
  }
}
