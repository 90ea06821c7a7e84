import ArgumentParser
import Foundation
import InnerPeace
import InnerPeaceServer

/// `innerpeace schedule`: the app's daily reminder as a calendar file.
struct ScheduleCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "schedule",
    abstract: "Write the next days' quotes as an iCalendar (.ics) file: one event a day at --hour.",
    usage: "innerpeace schedule [<options>]",
    discussion: """
      Each event's summary is "Inner Peace" and its description is the day's quote. Quotes are \
      shuffled by --seed and never repeat. Import the file into any calendar app: each event's UID \
      is its date, so importing an overlapping range again updates those days instead of adding \
      second reminders. `innerpeace serve` offers the same reminder as a feed, /calendar.ics.
      """
  )

  @Option(
    name: [.short, .long], help: ArgumentHelp("Where to write the calendar; '-' writes to stdout.", valueName: "path"))
  var out = "-"

  @Option(help: "How many days.")
  var days = 7

  @Option(help: "The local hour of each reminder (0 to 23).")
  var hour = 10

  @Option(
    name: .customLong("tz"),
    help: ArgumentHelp("The time zone of --hour, e.g. Europe/Paris. (default: this machine's)", valueName: "zone"))
  var timeZone: TimeZone?

  @OptionGroup var seed: SeedOptions

  @Option(
    name: .customLong("base-url"),
    help: ArgumentHelp(
      "The service's URL (e.g. https://cards.example.com): each event links its quote's page.", valueName: "url"))
  var baseURL: String?

  @OptionGroup var catalog: CatalogOptions

  func validate() throws {
    if let baseURL {
      guard let url = URL(string: baseURL), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil
      else {
        throw ValidationError("--base-url '\(baseURL)' is not an http(s) URL")
      }
    }
  }

  func run() throws {
    let output = try OutputTarget(path: out)
    let catalog = try catalog.load()
    let now = Date()
    let origin = baseURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
    let schedule = try DailySchedule(
      catalog: catalog, from: now, days: days, hour: hour, timeZone: timeZone ?? .current, seed: seed.value(),
      link: origin.map { origin in { origin + QuotePage.path($0) } })
    try output.write(Array(schedule.iCalendar(stamp: now).utf8))
  }
}
