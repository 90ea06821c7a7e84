public import Foundation

/// The app's daily reminder as an iCalendar (RFC 5545) calendar: one event a day at a local hour,
/// each with the quote of the day (``DailyQuote``) or with a different quote, shuffled by a seed.
///
/// An event's UID is derived from its local date alone (``uid(date:)``): the same day has the same
/// UID in every calendar made, so importing or fetching an overlapping range updates that day's
/// reminder instead of adding a second one.
public struct DailySchedule: Sendable {
  public struct Event: Sendable {
    public let start: Date
    /// The local date of `start`, `2026-11-24`.
    public let date: String
    public let quoteIndex: Int
    public let quote: Quote
    /// A page about the quote, from the caller's `link`.
    public let url: String?
  }

  /// The most days a schedule without a seed may cover.
  public static let maximumDays = 366

  public let events: [Event]
  public let timeZone: TimeZone

  /// - Parameters:
  ///   - from: the moment to start after; the first event is the next `hour`:00 that is still ahead
  ///     (or today's, past or not, with `includesToday`).
  ///   - days: how many daily events (1 to ``maximumDays``; with a seed, 1 to the number of
  ///     quotes, so that a shuffle never repeats).
  ///   - hour: the local hour of every event, 0 to 23.
  ///   - seed: shuffles the quotes with this seed; `nil` gives each day its quote of the day.
  ///   - link: the URL of a page about the quote at an index, if there is one.
  /// - Throws: ``ScheduleError/dayCountOutOfRange(_:maximum:)`` or
  ///   ``ScheduleError/hourOutOfRange(_:)``.
  public init(
    catalog: Catalog, from now: Date, days: Int = 7, hour: Int = 10, timeZone: TimeZone, seed: UInt64?,
    includesToday: Bool = false, link: ((Int) -> String)? = nil
  ) throws(ScheduleError) {
    let maximumDays = seed == nil ? DailySchedule.maximumDays : catalog.quotes.count
    guard (1...maximumDays).contains(days) else { throw .dayCountOutOfRange(days, maximum: maximumDays) }
    guard (0...23).contains(hour) else { throw .hourOutOfRange(hour) }
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = timeZone
    var first = calendar.date(bySettingHour: hour, minute: 0, second: 0, of: now) ?? now
    if first <= now && !includesToday { first = calendar.date(byAdding: .day, value: 1, to: first) ?? first }
    var generator = SeededGenerator(seed: seed ?? 0)
    let order = seed == nil ? [] : Array(catalog.quotes.indices).shuffled(using: &generator)
    var events: [Event] = []
    for day in 0..<days {
      // Each day's hour is computed from the calendar (not by adding 24 h), so it stays the same
      // local hour across daylight-saving changes.
      let dayStart = calendar.date(byAdding: .day, value: day, to: first) ?? first
      let start = calendar.date(bySettingHour: hour, minute: 0, second: 0, of: dayStart) ?? dayStart
      let date = DailyQuote.dateString(start, calendar: calendar)
      let index = seed == nil ? catalog.quoteOfTheDay(date: date).quoteIndex : order[day]
      events.append(
        Event(start: start, date: date, quoteIndex: index, quote: catalog.quotes[index], url: link?(index)))
    }
    self.events = events
    self.timeZone = timeZone
  }

  /// The calendar as iCalendar text: CRLF line ends, lines folded at 75 octets, text escaped.
  /// Times are UTC (`...Z`), which every client shows in its own zone at the right local hour.
  /// - Parameter stamp: the DTSTAMP of every event (pass a fixed date for reproducible output).
  public func iCalendar(stamp: Date) -> String {
    var lines = [
      "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//innerpeace//Inner Peace daily quote//EN", "CALSCALE:GREGORIAN",
      "METHOD:PUBLISH", "X-WR-CALNAME:Inner Peace",
    ]
    for event in events {
      let day = DailySchedule.utc(event.start)
      lines += [
        "BEGIN:VEVENT",
        "UID:\(DailySchedule.uid(date: event.date))",
        "DTSTAMP:\(DailySchedule.utc(stamp))",
        "DTSTART:\(day)",
        "DURATION:PT5M",
        "SUMMARY:Inner Peace",
        "DESCRIPTION:\(DailySchedule.escape(event.quote.shareMessage))",
      ]
      if let url = event.url {
        lines.append("URL:\(url)")
      }
      lines += [
        "BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:Inner Peace", "TRIGGER:PT0M", "END:VALARM", "END:VEVENT",
      ]
    }
    lines.append("END:VCALENDAR")
    return lines.map(DailySchedule.fold).joined(separator: "\r\n") + "\r\n"
  }

  /// The UID of a day's reminder: its local date only, so every calendar made for that day, in
  /// any run, names the same event.
  public static func uid(date: String) -> String { "innerpeace-daily-\(date)@innerpeace" }

  /// `20261122T090000Z`.
  static func utc(_ date: Date) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
    return String(format: "%04d%02d%02dT%02d%02d%02dZ", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!)
  }

  /// RFC 5545 §3.3.11: backslash, semicolon, comma and newline are escaped.
  static func escape(_ text: String) -> String {
    var result = ""
    for character in text {
      switch character {
      case "\\": result += "\\\\"
      case ";": result += "\\;"
      case ",": result += "\\,"
      case "\n", "\r\n": result += "\\n"
      default: result.append(character)
      }
    }
    return result
  }

  /// RFC 5545 §3.1: lines longer than 75 octets continue on the next line after a space, never
  /// splitting a UTF-8 sequence.
  static func fold(_ line: String) -> String {
    var result = ""
    var count = 0
    for character in line {
      let size = String(character).utf8.count
      if count + size > 75 {
        result += "\r\n "
        count = 1
      }
      result.append(character)
      count += size
    }
    return result
  }
}
