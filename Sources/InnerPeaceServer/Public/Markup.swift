/// Escaping for HTML and XML text, in elements and in quoted attributes: the pages, the Atom feed
/// and the batch gallery all go through it.
public enum Markup {
  /// `text` with `&`, `<`, `>`, `"` and `'` as entities.
  public static func escaped(_ text: String) -> String {
    var result = ""
    result.reserveCapacity(text.utf8.count)
    for character in text {
      switch character {
      case "&": result += "&amp;"
      case "<": result += "&lt;"
      case ">": result += "&gt;"
      case "\"": result += "&quot;"
      case "'": result += "&#39;"
      default: result.append(character)
      }
    }
    return result
  }
}
