import Foundation
import InnerPeace

/// Chooses a card's format from an `Accept` header (RFC 9110 §12.5.1), for the image URLs
/// without an extension (`/random`, `/cards/{quote}`, `/today`).
///
/// Each format gets the weight of the most specific media range that matches it (`image/webp`
/// over `image/*` over `*/*`); weight 0 refuses it. The highest weight wins. Among equal weights a
/// format the header names itself wins over one only a wildcard admits, and then AVIF before WebP
/// before JPEG before PNG (the smallest first: at the default qualities AVIF's cards have a higher
/// SSIM than WebP's at their size for `og` and 11 % smaller for `story`, BENCHMARKS.md "Issue 20:
/// AVIF") when named, PNG
/// before JPEG before WebP before AVIF (the most widely decoded first) when only wildcards admit
/// them. No header, or an empty one, is `*/*`: PNG. When every format is refused the answer is 406.
enum FormatNegotiation {
  /// A media range of an `Accept` header: `type/subtype` and its weight.
  struct MediaRange: Equatable {
    let type: String
    let subtype: String
    let weight: Double
  }

  /// The media ranges of a header, in order; ranges that do not parse are left out (they match
  /// nothing). A weight that does not parse is 0 (RFC 9110 allows 0 to 1 with 3 decimals).
  static func mediaRanges(_ header: String) -> [MediaRange] {
    header.split(separator: ",").compactMap { element in
      let parameters = element.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
      guard let range = parameters.first else { return nil }
      let parts = range.split(separator: "/", omittingEmptySubsequences: false)
      guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, parts[0] != "*" || parts[1] == "*" else {
        return nil
      }
      return MediaRange(type: String(parts[0]), subtype: String(parts[1]), weight: weight(parameters.dropFirst()))
    }
  }

  /// The weight (`q=`) among an element's parameters, trimmed and lowercased: 1 without one, 0
  /// for one that does not parse (RFC 9110 §12.4.2 allows 0 to 1 with 3 decimals).
  static func weight(_ parameters: some Sequence<String>) -> Double {
    var weight = 1.0
    for parameter in parameters where parameter.hasPrefix("q=") {
      let text = parameter.dropFirst(2)
      if let value = Double(text), text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
        (0...1).contains(value)
      {
        weight = value
      } else {
        weight = 0
      }
    }
    return weight
  }

  /// The format to send, or `nil` when the header refuses every candidate (a 406).
  /// - Parameter candidates: the formats the request allows (only the lossy ones when it asks
  ///   for a `quality`).
  static func choose(accept header: String?, among candidates: [ImageFormat] = ImageFormat.allCases) -> ImageFormat? {
    let text = header?.trimmingCharacters(in: .whitespaces) ?? ""
    let ranges = text.isEmpty ? [MediaRange(type: "*", subtype: "*", weight: 1)] : mediaRanges(text)
    // (format, weight, specificity of the matching range: 2 exact, 1 image/*, 0 */*)
    var scored: [(ImageFormat, Double, Int)] = []
    for format in candidates {
      var best: (weight: Double, specificity: Int)? = nil
      for range in ranges {
        let specificity: Int
        if range.type == "image" && (range.subtype == format.rawValue || (format == .jpeg && range.subtype == "jpg")) {
          specificity = 2
        } else if range.type == "image" && range.subtype == "*" {
          specificity = 1
        } else if range.type == "*" && range.subtype == "*" {
          specificity = 0
        } else {
          continue
        }
        if best == nil || specificity > best!.specificity
          || (specificity == best!.specificity && range.weight > best!.weight)
        {
          best = (range.weight, specificity)
        }
      }
      if let best, best.weight > 0 { scored.append((format, best.weight, best.specificity)) }
    }
    let named: [ImageFormat] = [.avif, .webp, .jpeg, .png]
    let wildcard: [ImageFormat] = [.png, .jpeg, .webp, .avif]
    return scored.max { a, b in
      if a.1 != b.1 { return a.1 < b.1 }
      if (a.2 == 2) != (b.2 == 2) { return b.2 == 2 }
      let order = a.2 == 2 ? named : wildcard
      return order.firstIndex(of: a.0)! > order.firstIndex(of: b.0)!
    }?.0
  }
}
