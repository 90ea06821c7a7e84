import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InnerPeace
import InnerPeaceServer
import NIOConcurrencyHelpers
import Testing

/// `/calendar.ics` and `/feed.xml`: the quote of the day to subscribe to. (Python's `icalendar`
/// and `feedparser` read them too, in Tests/feeds/feeds_test.py.)
@Suite struct FeedTests {
  /// A service whose clock the test moves, in Paris, with reminders at 8:00.
  static func configuration(_ clock: NIOLockedValueBox<Date>) throws -> ServerConfiguration {
    var configuration = testConfiguration()
    configuration.timeZone = try #require(TimeZone(identifier: "Europe/Paris"))
    configuration.reminderHour = 8
    configuration.publicURL = "https://cards.example.com"
    configuration.now = { clock.withLockedValue { $0 } }
    return configuration
  }

  /// The unfolded lines of an iCalendar text.
  static func lines(_ text: String) -> [String] {
    text.replacingOccurrences(of: "\r\n ", with: "").components(separatedBy: "\r\n")
  }

  /// Fourteen days from today (today's reminder included, even once its hour has passed), each
  /// with the quote of the day and a UID that is its date; the same bytes on every fetch that
  /// day; the next day's calendar names the shared days with the same UIDs and events.
  @Test func calendarIsStableByDate() async throws {
    let clock = NIOLockedValueBox(Date(timeIntervalSince1970: 1_795_435_200))  // 2026-11-23 09:20 UTC
    let catalog = try bundledCatalog
    try await withRouter(configuration: try Self.configuration(clock)) { client, _ in
      let first = try await client.get("/calendar.ics")
      #expect(first.status == 200)
      #expect(first.header("Content-Type") == "text/calendar; charset=utf-8")
      let lines = Self.lines(first.text)
      let uids = lines.filter { $0.hasPrefix("UID:") }
      #expect(uids.count == 14)
      #expect(uids.first == "UID:innerpeace-daily-2026-11-23@innerpeace", "\(uids)")
      #expect(uids.last == "UID:innerpeace-daily-2026-12-06@innerpeace", "\(uids)")
      #expect(lines.filter { $0.hasPrefix("DTSTART:") }.first == "DTSTART:20261123T070000Z", "8:00 in Paris")
      let urls = lines.filter { $0.hasPrefix("URL:") }
      let expected = catalog.quoteOfTheDay(date: "2026-11-23").quoteIndex
      #expect(urls.first == "URL:https://cards.example.com/q/\(expected)")
      let cacheControl = try #require(first.header("Cache-Control"))
      #expect(cacheControl == "public, max-age=3600", "\(cacheControl)")

      clock.withLockedValue { $0 += 6 * 3600 }
      let later = try await client.get("/calendar.ics")
      #expect(later.body == first.body, "the same day, the same calendar")
      #expect(later.header("ETag") == first.header("ETag"))
      let revalidated = try await client.get("/calendar.ics", ifNoneMatch: first.header("ETag"))
      #expect(revalidated.status == 304)
      // The same reading of If-None-Match as the cards': weak, in a list, or any tag.
      let tag = try #require(first.header("ETag"))
      for condition in ["W/\(tag)", "\"nope\", \(tag)", "*"] {
        let reply = try await client.get("/calendar.ics", ifNoneMatch: condition)
        #expect(reply.status == 304, "If-None-Match: \(condition) → \(reply.status)")
        #expect(reply.header("ETag") == tag)
      }
      for condition in ["\"nope\"", "W/\"nope\"", "\(tag.dropLast())x\""] {
        let reply = try await client.get("/calendar.ics", ifNoneMatch: condition)
        #expect(reply.status == 200, "If-None-Match: \(condition) → \(reply.status)")
      }

      clock.withLockedValue { $0 += 18 * 3600 }  // 2026-11-24 10:20 in Paris
      let next = try await client.get("/calendar.ics")
      let nextLines = Self.lines(next.text)
      #expect(nextLines.filter { $0.hasPrefix("UID:") }.first == "UID:innerpeace-daily-2026-11-24@innerpeace")
      #expect(next.header("ETag") != first.header("ETag"))
      // The 13 shared days: the same UIDs, starts, quotes and links.
      func events(_ lines: [String]) -> [String: [String]] {
        var result: [String: [String]] = [:]
        var current: [String] = []
        for line in lines {
          if line == "BEGIN:VEVENT" { current = [] }
          if !line.hasPrefix("DTSTAMP:") { current.append(line) }
          if line == "END:VEVENT", let uid = current.first(where: { $0.hasPrefix("UID:") }) { result[uid] = current }
        }
        return result
      }
      let before = events(lines)
      let after = events(nextLines)
      let shared = Set(before.keys).intersection(after.keys)
      #expect(shared.count == 13)
      for uid in shared { #expect(before[uid] == after[uid], "\(uid)") }
    }
  }

  /// The Atom feed: today first, then the six days before, each linking its page and carrying its
  /// og JPEG card (absolute, versioned) as an enclosure; the enclosure serves that card.
  @Test func atomFeed() async throws {
    let clock = NIOLockedValueBox(Date(timeIntervalSince1970: 1_795_435_200))
    let catalog = try bundledCatalog
    try await withRouter(configuration: try Self.configuration(clock)) { client, service in
      let reply = try await client.get("/feed.xml")
      #expect(reply.status == 200)
      #expect(reply.header("Content-Type") == "application/atom+xml; charset=utf-8")
      let text = reply.text
      #expect(
        text.hasPrefix("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">"))
      let ids = text.matches(of: #/<id>urn:innerpeace:quote-of-the-day:([0-9-]+)</id>/#).map { String($0.1) }
      #expect(
        ids == [
          "2026-11-23", "2026-11-22", "2026-11-21", "2026-11-20", "2026-11-19", "2026-11-18", "2026-11-17",
        ])
      let today = catalog.quoteOfTheDay(date: "2026-11-23")
      #expect(
        text.contains(
          "<link rel=\"alternate\" type=\"text/html\" href=\"https://cards.example.com/q/\(today.quoteIndex)\"/>"))
      let enclosures = text.matches(of: #/<link rel="enclosure" type="image/jpeg" href="([^"]+)"/>/#).map {
        String($0.1).replacingOccurrences(of: "&amp;", with: "&")
      }
      #expect(enclosures.count == 7)
      let first = try #require(enclosures.first)
      #expect(path(of: first) == "/cards/\(today.quoteIndex).jpg")
      #expect(queryItems(of: first)["v"] == service.contentVersion)
      #expect(queryItems(of: first)["picture"] == today.picture)
      let card = try await client.get(first)
      expectCard(card, format: "jpeg", size: (1200, 630))
      #expect(card.header("Cache-Control") == "public, max-age=31536000, immutable")
      // /today shows the same quote.
      let todayCard = try await client.get("/today.jpg?preset=square")
      #expect(todayCard.header("X-Quote-Index") == String(today.quoteIndex))
      // Quotes are escaped: the feed is well-formed whatever the catalog holds.
      #expect(!text.contains("\" \u{2014}\""), "unescaped quote marks in an attribute")
    }
  }
}
