import Foundation
import HTTPTypes
import Hummingbird
import InnerPeace

/// The quote of the day to subscribe to: `/calendar.ics`, the app's daily reminder as a calendar
/// feed, and `/feed.xml`, an Atom feed with the card as an enclosure. Both are the same bytes all
/// day (cacheable until the configured time zone's midnight, at most an hour) and link each
/// quote's page.
struct FeedController<Renderer: CardRendering> {
  let service: CardService<Renderer>

  /// Registers the feeds' routes from ``RouteTable``.
  func addRoutes(to router: some RouterMethods<BasicRequestContext>) {
    router.get(.calendar, configuration: service.configuration) { request, _, _ in try calendar(request) }
    router.get(.feed, configuration: service.configuration) { request, _, _ in try feed(request) }
  }

  /// Days in the calendar, from today.
  static var calendarDays: Int { 14 }
  /// Entries in the Atom feed: today and the days before it.
  static var feedDays: Int { 7 }

  /// The next ``calendarDays`` days' reminders at `--reminder-hour`, today's included, each
  /// day's quote of the day, with UIDs from the date alone (``DailySchedule/uid(date:)``).
  func calendar(_ request: Request) throws -> Response {
    let now = service.configuration.now()
    let zone = service.configuration.timeZone
    let today = DailyQuote(at: now, timeZone: zone, catalog: service.catalog)
    let origin = service.links.origin(of: request)
    let schedule: DailySchedule
    do {
      schedule = try DailySchedule(
        catalog: service.catalog, from: today.start, days: Self.calendarDays,
        hour: service.configuration.reminderHour, timeZone: zone, seed: nil, includesToday: true,
        link: { origin + QuotePage.path($0) })
    } catch {
      // The service's own configuration (validated at start-up), never the request's fault.
      throw ServiceError(.internalServerError, "the calendar could not be made")
    }
    // Stamped with the day's start, so the calendar is the same bytes all day.
    let body = schedule.iCalendar(stamp: today.start)
    return document(
      body, type: "text/calendar; charset=utf-8", day: today, now: now, request: request,
      key: "calendar|\(today.date)|\(service.configuration.reminderHour)|\(zone.identifier)|\(origin)")
  }

  /// Today's quote and the ``feedDays`` - 1 before it, newest first, each linking its page and
  /// carrying its og card (JPEG, absolute and versioned) as an enclosure.
  func feed(_ request: Request) throws -> Response {
    let now = service.configuration.now()
    let zone = service.configuration.timeZone
    let catalog = service.catalog
    let links = service.links
    let today = DailyQuote(at: now, timeZone: zone, catalog: catalog)
    let origin = links.origin(of: request)
    var options = CardOptions()
    options.format = .jpeg
    var entries = ""
    for offset in 0..<Self.feedDays {
      let day = today.adding(days: -offset, timeZone: zone, catalog: catalog)
      let quote = catalog.quotes[day.quoteIndex]
      let page = origin + links.quotePagePath(day.quoteIndex)
      let image = origin + links.cardPath(quote: day.quoteIndex, picture: day.picture, options: options)
      let html =
        "<p><img src=\"\(Markup.escaped(image))\" alt=\"\(Markup.escaped(quote.shareMessage))\" width=\"1200\" height=\"630\"></p>"
      entries += """
          <entry>
            <id>urn:innerpeace:quote-of-the-day:\(day.date)</id>
            <title>\(Markup.escaped(quote.shareMessage))</title>
            <updated>\(Self.timestamp(day.start, zone: zone))</updated>
            <link rel="alternate" type="text/html" href="\(Markup.escaped(page))"/>
            <link rel="enclosure" type="image/jpeg" href="\(Markup.escaped(image))"/>
            <summary>\(Markup.escaped(quote.shareMessage))</summary>
            <content type="html">\(Markup.escaped(html))</content>
          </entry>

        """
    }
    let body = """
      <?xml version="1.0" encoding="utf-8"?>
      <feed xmlns="http://www.w3.org/2005/Atom">
        <id>urn:innerpeace:quote-of-the-day</id>
        <title>Inner Peace: the quote of the day</title>
        <updated>\(Self.timestamp(today.start, zone: zone))</updated>
        <author><name>Inner Peace</name></author>
        <link rel="self" type="application/atom+xml" href="\(Markup.escaped(origin))/feed.xml"/>
        <link rel="alternate" type="text/html" href="\(Markup.escaped(origin))/"/>
      \(entries)</feed>

      """
    return document(
      body, type: "application/atom+xml; charset=utf-8", day: today, now: now, request: request,
      key: "feed|\(today.date)|\(zone.identifier)|\(origin)")
  }

  /// A text document of the day: cacheable until midnight (at most an hour), with an ETag and 304.
  private func document(
    _ body: String, type: String, day: DailyQuote, now: Date, request: Request, key: String
  ) -> Response {
    let etag = service.etag(for: key)
    let cacheControl = service.links.cacheControl("public, max-age=\(min(3600, day.secondsUntilEnd(from: now)))")
    if let notModified = Revalidation.notModified(request, etag: etag, cacheControl: cacheControl) {
      return notModified
    }
    let buffer = ByteBuffer(string: body)
    return Response(
      status: .ok,
      headers: [
        .contentType: type, .cacheControl: cacheControl, .eTag: etag,
      ],
      body: .init(byteBuffer: buffer))
  }

  /// RFC 3339 with the zone's offset: `2026-11-24T00:00:00+01:00`.
  static func timestamp(_ date: Date, zone: TimeZone) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = zone
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.string(from: date)
  }
}
