public import Foundation

/// The quote of a day: the same quote and picture for everyone whose date, in one time zone, is
/// that day. The service's `/today`, its calendar feed and its Atom feed all use it.
public struct DailyQuote: Sendable {
  /// The local date, `2026-11-24`.
  public let date: String
  public let quoteIndex: Int
  public let picture: String
  /// The day's first moment (local midnight) and the next day's: 23, 24 or 25 hours apart.
  public let start: Date
  public let end: Date

  /// The day that `moment` falls on in `timeZone`.
  public init(at moment: Date, timeZone: TimeZone, catalog: Catalog) {
    let calendar = Self.calendar(timeZone)
    date = Self.dateString(moment, calendar: calendar)
    (quoteIndex, picture) = catalog.quoteOfTheDay(date: date)
    start = calendar.startOfDay(for: moment)
    end = calendar.date(byAdding: .day, value: 1, to: start) ?? start.addingTimeInterval(86_400)
  }

  /// The day `offset` days after this one (before it when negative).
  public func adding(days offset: Int, timeZone: TimeZone, catalog: Catalog) -> DailyQuote {
    let calendar = Self.calendar(timeZone)
    // Noon of the target day: never ambiguous across a daylight-saving change.
    let noon = calendar.date(byAdding: .hour, value: 12, to: start) ?? start
    let target = calendar.date(byAdding: .day, value: offset, to: noon) ?? noon
    return DailyQuote(at: target, timeZone: timeZone, catalog: catalog)
  }

  /// Whole seconds from `moment` to the end of the day, at least 1.
  public func secondsUntilEnd(from moment: Date) -> Int {
    max(1, Int(end.timeIntervalSince(moment).rounded(.down)))
  }

  /// `2026-11-24` for a moment in a calendar's time zone.
  static func dateString(_ moment: Date, calendar: Calendar) -> String {
    let parts = calendar.dateComponents([.year, .month, .day], from: moment)
    return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
  }

  static func calendar(_ timeZone: TimeZone) -> Calendar {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = timeZone
    return calendar
  }
}

extension Catalog {
  /// The quote and picture of a date (`2026-11-24`): the quote a seed hashed from the date picks,
  /// on its own picture (``picture(forQuote:offset:)``), as its card is everywhere else.
  public func quoteOfTheDay(date: String) -> (quoteIndex: Int, picture: String) {
    let quoteIndex = randomChoice(seed: StableHash.of("today|" + date)).quoteIndex
    return (quoteIndex, picture(forQuote: quoteIndex))
  }
}
