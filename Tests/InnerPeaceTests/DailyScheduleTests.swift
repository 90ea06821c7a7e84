import Foundation
import InnerPeace
import Testing

/// The daily reminder calendar: which days and times, which quotes, and RFC 5545 text.
@Suite("Daily schedule (iCalendar)")
struct DailyScheduleTests {
  static var catalog: Catalog { Fixtures.catalog }

  static func zone(_ identifier: String) throws -> TimeZone {
    try #require(TimeZone(identifier: identifier), "no time zone \(identifier)")
  }

  static func calendar(_ zone: TimeZone) -> Calendar {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = zone
    return calendar
  }

  /// A local wall-clock moment in `zone`.
  static func local(
    _ zone: TimeZone, _ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0
  ) throws -> Date {
    try #require(
      calendar(zone).date(
        from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)))
  }

  /// `20261122T090000Z`, computed independently of the code under test.
  static func utcStamp(_ date: Date) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.calendar = Calendar(identifier: .gregorian)
    formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
    return formatter.string(from: date)
  }

  /// Checks that the events are at `hour`:00:00 local time on consecutive local days.
  static func expectDaily(
    _ schedule: DailySchedule, zone: TimeZone, hour: Int, firstDay: DateComponents? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let calendar = calendar(zone)
    var previousDay: Date?
    for (number, event) in schedule.events.enumerated() {
      let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: event.start)
      #expect(
        parts.hour == hour && parts.minute == 0 && parts.second == 0,
        "event \(number) is at \(parts.hour ?? -1):\(parts.minute ?? -1):\(parts.second ?? -1) in \(zone.identifier), not \(hour):00:00 (\(event.start))",
        sourceLocation: sourceLocation)
      let day = calendar.startOfDay(for: event.start)
      if let previousDay {
        let gap = calendar.dateComponents([.day], from: previousDay, to: day).day
        #expect(gap == 1, "event \(number) is \(gap ?? -1) days after the one before", sourceLocation: sourceLocation)
      } else if let firstDay {
        #expect(
          parts.year == firstDay.year && parts.month == firstDay.month && parts.day == firstDay.day,
          "the first event is on \(parts), expected \(firstDay)", sourceLocation: sourceLocation)
      }
      previousDay = day
    }
  }

  // MARK: Days, times and quotes

  @Test func nEventsWithDistinctQuotesAtTenLocal() throws {
    let paris = try Self.zone("Europe/Paris")
    let schedule = try DailySchedule(
      catalog: Self.catalog, from: try Self.local(paris, 2026, 6, 10, 8, 30), days: 7, timeZone: paris, seed: 3)
    #expect(schedule.events.count == 7)
    #expect(Set(schedule.events.map(\.quoteIndex)).count == 7, "a quote repeats")
    for event in schedule.events {
      #expect(Self.catalog.quotes[event.quoteIndex] == event.quote)
    }
    Self.expectDaily(schedule, zone: paris, hour: 10, firstDay: DateComponents(year: 2026, month: 6, day: 10))
    #expect(schedule.timeZone.identifier == "Europe/Paris")
  }

  @Test func theFirstEventIsTheNextHourStillAhead() throws {
    let zone = try Self.zone("Asia/Tokyo")
    let cases: [(from: Date, firstDay: Int)] = [
      (try Self.local(zone, 2026, 5, 4, 9, 59, 59), 4),
      (try Self.local(zone, 2026, 5, 4, 10, 0, 0), 5),
      (try Self.local(zone, 2026, 5, 4, 10, 0, 1), 5),
      (try Self.local(zone, 2026, 5, 4, 23, 59, 0), 5),
      (try Self.local(zone, 2026, 5, 4, 0, 0, 0), 4),
    ]
    for (from, firstDay) in cases {
      let schedule = try DailySchedule(catalog: Self.catalog, from: from, days: 2, timeZone: zone, seed: 1)
      #expect(schedule.events.first!.start > from, "the first event is not ahead of \(from)")
      Self.expectDaily(schedule, zone: zone, hour: 10, firstDay: DateComponents(year: 2026, month: 5, day: firstDay))
    }
  }

  /// Daylight-saving changes inside the window: every event stays at the local hour.
  @Test(arguments: [
    ("America/New_York", 2026, 10, 29, 10),  // back to EST on 1 November
    ("America/New_York", 2026, 3, 5, 10),  // to EDT on 8 March
    ("Europe/Paris", 2026, 3, 26, 10),  // to CEST on 29 March
    ("Europe/Paris", 2026, 10, 22, 10),  // to CET on 25 October
    ("Australia/Sydney", 2026, 4, 1, 10),  // to AEST on 5 April
    ("Australia/Lord_Howe", 2026, 10, 1, 10),  // a half-hour change on 4 October
    ("America/New_York", 2026, 10, 29, 1),  // 01:00 happens twice on 1 November
    ("Europe/London", 2026, 3, 26, 0),  // midnight before the change
  ])
  func theHourHoldsAcrossDaylightSavingChanges(
    zoneName: String, year: Int, month: Int, day: Int, hour: Int
  ) throws {
    let zone = try Self.zone(zoneName)
    let from = try Self.local(zone, year, month, day, 0, 0, 0)
    // Midnight itself is not ahead of `from`: that case starts a day later.
    let first = hour == 0 ? day + 1 : day
    let schedule = try DailySchedule(catalog: Self.catalog, from: from, days: 7, hour: hour, timeZone: zone, seed: 11)
    #expect(schedule.events.count == 7)
    Self.expectDaily(schedule, zone: zone, hour: hour, firstDay: DateComponents(year: year, month: month, day: first))
  }

  /// 02:00 does not exist on the spring-forward day: that day's reminder comes as soon as the
  /// clock allows (03:00), and no day is skipped or doubled.
  @Test(arguments: [("America/New_York", 2026, 3, 5, 8), ("Europe/Berlin", 2026, 3, 26, 29)])
  func anHourThatDoesNotExistOnTheChangeDay(zoneName: String, year: Int, month: Int, day: Int, gapDay: Int) throws {
    let zone = try Self.zone(zoneName)
    let schedule = try DailySchedule(
      catalog: Self.catalog, from: try Self.local(zone, year, month, day), days: 7, hour: 2, timeZone: zone, seed: 1)
    let calendar = Self.calendar(zone)
    let first = try Self.local(zone, year, month, day)
    let offsets = schedule.events.map {
      calendar.dateComponents([.day], from: first, to: calendar.startOfDay(for: $0.start)).day ?? -1
    }
    #expect(offsets == Array(0..<7), "days after \(month)/\(day): \(offsets)")
    for event in schedule.events {
      let parts = calendar.dateComponents([.day, .hour, .minute], from: event.start)
      #expect(parts.hour == (parts.day == gapDay ? 3 : 2) && parts.minute == 0, "\(parts)")
    }
  }

  @Test func newYorkAcrossNovemberFirstInUTC() throws {
    let newYork = try Self.zone("America/New_York")
    let schedule = try DailySchedule(
      catalog: Self.catalog, from: try Self.local(newYork, 2026, 10, 29, 0), days: 7, timeZone: newYork, seed: 2)
    // 10:00 EDT is 14:00 UTC until 31 October; 10:00 EST is 15:00 UTC from 1 November.
    #expect(
      schedule.events.map { Self.utcStamp($0.start) } == [
        "20261029T140000Z", "20261030T140000Z", "20261031T140000Z", "20261101T150000Z", "20261102T150000Z",
        "20261103T150000Z", "20261104T150000Z",
      ])
    let text = schedule.iCalendar(stamp: try Self.local(newYork, 2026, 10, 28, 12))
    for stamp in ["20261031T140000Z", "20261101T150000Z"] {
      #expect(text.contains("DTSTART:\(stamp)\r\n"), "no DTSTART \(stamp)")
    }
  }

  @Test func quotesAreShuffledBySeedAndNeverRepeat() throws {
    let zone = try Self.zone("UTC")
    let from = try Self.local(zone, 2026, 1, 1)
    let count = Self.catalog.quotes.count
    let a = try DailySchedule(catalog: Self.catalog, from: from, days: count, timeZone: zone, seed: 5)
    let b = try DailySchedule(catalog: Self.catalog, from: from, days: count, timeZone: zone, seed: 5)
    let c = try DailySchedule(catalog: Self.catalog, from: from, days: count, timeZone: zone, seed: 6)
    #expect(a.events.map(\.quoteIndex) == b.events.map(\.quoteIndex), "the same seed gave another order")
    #expect(a.events.map(\.start) == b.events.map(\.start))
    #expect(a.events.map(\.quoteIndex) != c.events.map(\.quoteIndex), "seeds 5 and 6 gave the same order")
    #expect(a.events.map(\.quoteIndex).sorted() == Array(0..<count), "the whole catalog, each quote once")
    #expect(a.events.map(\.quoteIndex) != Array(0..<count), "not shuffled")
    // A shorter schedule with the same seed is the start of the longer one.
    let short = try DailySchedule(catalog: Self.catalog, from: from, days: 5, timeZone: zone, seed: 5)
    #expect(short.events.map(\.quoteIndex) == Array(a.events.map(\.quoteIndex).prefix(5)))
  }

  /// A day's UID depends on its local date only: schedules made with other seeds, from other
  /// moments, or as the quote of the day name the days they share with the same UIDs (so an
  /// overlapping import replaces a day's reminder instead of adding a second one).
  @Test func uidsAreTheDatesAlone() throws {
    let paris = try Self.zone("Europe/Paris")
    let monday = try Self.local(paris, 2026, 11, 23, 8)
    let thursday = try Self.local(paris, 2026, 11, 26, 18)
    let first = try DailySchedule(catalog: Self.catalog, from: monday, days: 7, timeZone: paris, seed: 1)
    let second = try DailySchedule(catalog: Self.catalog, from: thursday, days: 7, timeZone: paris, seed: 2)
    let daily = try DailySchedule(catalog: Self.catalog, from: thursday, days: 7, timeZone: paris, seed: nil)
    func uids(_ schedule: DailySchedule) -> [String: String] {
      Dictionary(uniqueKeysWithValues: schedule.events.map { ($0.date, DailySchedule.uid(date: $0.date)) })
    }
    #expect(first.events.map(\.date).first == "2026-11-23")
    #expect(second.events.map(\.date).first == "2026-11-27")
    let shared = Set(first.events.map(\.date)).intersection(second.events.map(\.date))
    #expect(shared == ["2026-11-27", "2026-11-28", "2026-11-29"])
    for date in shared {
      #expect(uids(first)[date] == uids(second)[date])
      #expect(uids(first)[date] == uids(daily)[date])
    }
    // Without a seed each day carries its quote of the day, the one /today shows.
    for event in daily.events {
      #expect(event.quoteIndex == Self.catalog.quoteOfTheDay(date: event.date).quoteIndex)
    }
    // The whole text: the same UIDs, line for line.
    let text = second.iCalendar(stamp: thursday)
    for date in shared { #expect(text.contains("UID:innerpeace-daily-\(date)@innerpeace\r\n")) }
  }

  static func smallCatalog(_ quotes: [Quote]) throws -> Catalog {
    try Catalog(quotes: quotes, pictures: ["aqua.jpg"], directory: Fixtures.catalog.directory)
  }

  @Test func daysAndHourBounds() throws {
    let zone = try Self.zone("Europe/Paris")
    let from = try Self.local(zone, 2026, 2, 2)
    let three = try Self.smallCatalog([
      Quote(text: "One.", author: "A"), Quote(text: "Two.", author: "B"), Quote(text: "Three.", author: "C"),
    ])
    #expect(try DailySchedule(catalog: three, from: from, days: 3, timeZone: zone, seed: 1).events.count == 3)
    for days in [0, -1, 4, 1000] {
      let error = thrownError(ScheduleError.self) {
        try DailySchedule(catalog: three, from: from, days: days, timeZone: zone, seed: 1)
      }
      #expect(error == .dayCountOutOfRange(days, maximum: 3), "days \(days): \(String(describing: error))")
      let reason = error?.description ?? ""
      // Neutral words: the core names no command-line option.
      #expect(reason.hasPrefix("days \(days) ") && !reason.contains("--"), "\(reason)")
    }
    for hour in [24, 25, -1] {
      let error = thrownError(ScheduleError.self) {
        try DailySchedule(catalog: three, from: from, days: 1, hour: hour, timeZone: zone, seed: 1)
      }
      #expect(error == .hourOutOfRange(hour), "hour \(hour): \(String(describing: error))")
      let reason = error?.description ?? ""
      #expect(reason.hasPrefix("hour \(hour) ") && !reason.contains("--"), "\(reason)")
    }
    for hour in [0, 23] {
      let schedule = try DailySchedule(catalog: three, from: from, days: 3, hour: hour, timeZone: zone, seed: 1)
      Self.expectDaily(schedule, zone: zone, hour: hour)
    }
  }

  // MARK: iCalendar text

  /// Physical lines (CRLF separated; the text must end with CRLF).
  static func physicalLines(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> [[UInt8]] {
    let bytes = Array(text.utf8)
    #expect(bytes.suffix(2) == [13, 10], "the text does not end with CRLF", sourceLocation: sourceLocation)
    var lines: [[UInt8]] = []
    var current: [UInt8] = []
    var index = 0
    while index < bytes.count {
      if bytes[index] == 13, index + 1 < bytes.count, bytes[index + 1] == 10 {
        lines.append(current)
        current = []
        index += 2
        continue
      }
      if bytes[index] == 13 || bytes[index] == 10 {
        Issue.record("a bare CR or LF at octet \(index)", sourceLocation: sourceLocation)
      }
      current.append(bytes[index])
      index += 1
    }
    #expect(current.isEmpty, "text after the last CRLF", sourceLocation: sourceLocation)
    return lines
  }

  /// Logical lines: continuation lines (starting with a space) joined to the line before.
  static func unfold(_ physical: [[UInt8]]) -> [String] {
    var logical: [[UInt8]] = []
    for line in physical {
      if line.first == 0x20, !logical.isEmpty {
        logical[logical.count - 1] += line.dropFirst()
      } else {
        logical.append(line)
      }
    }
    return logical.map { String(decoding: $0, as: UTF8.self) }
  }

  static func unescape(_ value: String) -> String {
    var result = ""
    var escaping = false
    for character in value {
      if escaping {
        switch character {
        case "n", "N": result.append("\n")
        default: result.append(character)
        }
        escaping = false
      } else if character == "\\" {
        escaping = true
      } else {
        result.append(character)
      }
    }
    return result
  }

  /// The escaped value has no bare comma, semicolon or newline, and no dangling backslash.
  static func isProperlyEscaped(_ value: String) -> Bool {
    var escaping = false
    for character in value {
      if escaping {
        guard [",", ";", "\\", "n", "N"].contains(character) else { return false }
        escaping = false
      } else if character == "\\" {
        escaping = true
      } else if character == "," || character == ";" || character == "\n" || character == "\r\n" {
        return false
      }
    }
    return !escaping
  }

  @Test func calendarStructure() throws {
    let paris = try Self.zone("Europe/Paris")
    let stamp = try Self.local(paris, 2026, 3, 1, 9, 15, 7)
    let schedule = try DailySchedule(
      catalog: Self.catalog, from: stamp, days: 5, timeZone: paris, seed: 7,
      link: { "https://cards.example.com/q/\($0)" })
    let text = schedule.iCalendar(stamp: stamp)
    let lines = Self.unfold(Self.physicalLines(text))
    #expect(lines.first == "BEGIN:VCALENDAR")
    #expect(lines.last == "END:VCALENDAR")
    #expect(lines.contains("VERSION:2.0"))
    #expect(lines.contains { $0.hasPrefix("PRODID:") && $0.count > "PRODID:".count })
    #expect(lines.filter { $0 == "BEGIN:VEVENT" }.count == 5)
    #expect(lines.filter { $0 == "END:VEVENT" }.count == 5)
    #expect(lines.filter { $0 == "SUMMARY:Inner Peace" }.count == 5)
    #expect(lines.filter { $0 == "DTSTAMP:\(Self.utcStamp(stamp))" }.count == 5)
    #expect(lines.filter { $0.hasPrefix("DTSTART:") } == schedule.events.map { "DTSTART:\(Self.utcStamp($0.start))" })
    let uids = lines.filter { $0.hasPrefix("UID:") }
    #expect(uids.count == 5 && Set(uids).count == 5, "UIDs are missing or repeat: \(uids)")
    #expect(uids.first == "UID:innerpeace-daily-2026-03-01@innerpeace", "\(uids)")
    // Each event links its quote's page; the trailing slash of the base URL is not doubled.
    #expect(
      lines.filter { $0.hasPrefix("URL:") }
        == schedule.events.map { "URL:https://cards.example.com/q/\($0.quoteIndex)" })
    // BEGIN and END nest properly.
    var stack: [String] = []
    for line in lines {
      if line.hasPrefix("BEGIN:") { stack.append(String(line.dropFirst(6))) }
      if line.hasPrefix("END:") {
        #expect(stack.popLast() == String(line.dropFirst(4)), "END:\(line.dropFirst(4)) does not close its BEGIN")
      }
    }
    #expect(stack.isEmpty)

    let plain = try DailySchedule(catalog: Self.catalog, from: stamp, days: 2, timeZone: paris, seed: 7)
    #expect(!plain.iCalendar(stamp: stamp).contains("\r\nURL:"), "a URL without --base-url")
  }

  /// Quotes with every character that needs escaping, and long runs of multi-byte characters
  /// starting at every offset so that folding meets them mid-line.
  static let trickyQuotes: [Quote] = {
    var quotes = [
      Quote(
        text: "Breathe, slowly; then rest \\ here.\nA second line, with commas, and; semicolons.", author: "Anon, Jr."),
      Quote(text: String(repeating: "静かな心。", count: 30), author: "禅"),
      Quote(text: String(repeating: "e\u{301}", count: 60) + " café, naïve; déjà vu", author: "Zoë"),
    ]
    for offset in 0..<4 {
      quotes.append(
        Quote(
          text: String(repeating: "a", count: offset) + String(repeating: "😀🌿", count: 25) + " — calm",
          author: "Ü"))
      quotes.append(Quote(text: String(repeating: "x", count: offset) + String(repeating: "é", count: 90), author: "É"))
    }
    return quotes
  }()

  @Test func linesAreFoldedAt75OctetsWithoutSplittingUTF8AndTextIsEscaped() throws {
    let catalog = try Self.smallCatalog(Self.trickyQuotes)
    let zone = try Self.zone("UTC")
    let stamp = try Self.local(zone, 2026, 7, 1)
    let schedule = try DailySchedule(
      catalog: catalog, from: stamp, days: catalog.quotes.count, timeZone: zone, seed: 3,
      link: { "https://cards.example.com/q/\($0)" })
    let text = schedule.iCalendar(stamp: stamp)
    let physical = Self.physicalLines(text)
    var folded = 0
    for (number, line) in physical.enumerated() {
      #expect(line.count <= 75, "line \(number) has \(line.count) octets")
      #expect(
        String(validating: line, as: UTF8.self) != nil, "line \(number) is not valid UTF-8 on its own: \(line)")
      if line.first == 0x20 {
        folded += 1
        // A fold is made only when the next character would not fit.
        let previous = physical[number - 1]
        if let next = String(decoding: line.dropFirst(), as: UTF8.self).first {
          #expect(previous.count + String(next).utf8.count > 75, "line \(number - 1) was folded early")
        }
      }
    }
    #expect(folded > 20, "the long quotes were not folded (\(folded) continuation lines)")

    // Unfolded, each event's DESCRIPTION is its quote's share message, escaped.
    let lines = Self.unfold(physical)
    var descriptions: [String] = []
    var inEvent = false
    var inAlarm = false
    for line in lines {
      switch line {
      case "BEGIN:VEVENT": inEvent = true
      case "END:VEVENT": inEvent = false
      case "BEGIN:VALARM": inAlarm = true
      case "END:VALARM": inAlarm = false
      default:
        if inEvent, !inAlarm, line.hasPrefix("DESCRIPTION:") { descriptions.append(String(line.dropFirst(12))) }
      }
    }
    #expect(descriptions.count == schedule.events.count)
    for (value, event) in zip(descriptions, schedule.events) {
      #expect(Self.isProperlyEscaped(value), "not escaped: \(value)")
      #expect(Self.unescape(value) == event.quote.shareMessage)
    }
    let first = try #require(descriptions.first { $0.contains("Breathe") })
    #expect(first.contains("Breathe\\, slowly\\; then rest \\\\ here.\\nA second line"), "\(first)")
    #expect(first.contains("Anon\\, Jr."), "\(first)")
  }

  @Test func aLineOfExactly75OctetsIsNotFolded() throws {
    // DESCRIPTION:"<text>" — A is 20 octets plus the text.
    let zone = try Self.zone("UTC")
    let stamp = try Self.local(zone, 2026, 7, 1)
    for (length, expectedLines) in [(55, 1), (56, 2)] {
      let catalog = try Self.smallCatalog([Quote(text: String(repeating: "a", count: length), author: "A")])
      let schedule = try DailySchedule(catalog: catalog, from: stamp, days: 1, timeZone: zone, seed: 0)
      let physical = Self.physicalLines(schedule.iCalendar(stamp: stamp))
      let start = try #require(physical.firstIndex { $0.starts(with: Array("DESCRIPTION:\"".utf8)) })
      let end = physical[(start + 1)...].firstIndex { $0.first != 0x20 } ?? physical.count
      #expect(end - start == expectedLines, "a \(20 + length)-octet line took \(end - start) lines")
      #expect(physical[start].count == min(75, 20 + length))
    }
  }
}
