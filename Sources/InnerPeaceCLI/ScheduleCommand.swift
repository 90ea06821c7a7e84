import ArgumentParser
import Foundation
import InnerPeace

/// `innerpeace schedule`: the app's daily reminder as a calendar file.
struct ScheduleCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "schedule",
    abstract: "Write the next days' quotes as an iCalendar (.ics) file: one event a day at 10:00.",
    discussion: """
      Each event's summary is "Inner Peace" and its description is the day's quote. Quotes are
      shuffled by --seed and never repeat. Import the file into any calendar app: each event's UID
      is its date, so importing an overlapping range again updates those days instead of adding
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

  @Option(name: .customLong("tz"), help: "The time zone of --hour, e.g. Europe/Paris. (default: this machine's)")
  var timeZone: String?

  @Option(parsing: .unconditional, help: "Seed for the shuffle; the same seed gives the same quotes. (default: random)")
  var seed: String?

  @Option(
    name: .customLong("base-url"),
    help: ArgumentHelp(
      "The service's URL (e.g. https://cards.example.com): each event links its quote's page.", valueName: "url"))
  var baseURL: String?

  @Option(help: ArgumentHelp("A folder with your own quotes.json, pictures.json and photos.", valueName: "dir"))
  var catalog: String?

  func run() throws {
    let zone: TimeZone
    if let timeZone {
      guard let named = TimeZone(identifier: timeZone) else {
        throw CommandLineError.usage("unknown --tz '\(timeZone)': use an IANA name such as Europe/Paris")
      }
      zone = named
    } else {
      zone = TimeZone.current
    }
    let chosenSeed: UInt64
    if let seed {
      guard let value = UInt64(seed) else { throw CommandLineError.usage("--seed '\(seed)' is not a whole number") }
      chosenSeed = value
    } else {
      chosenSeed = UInt64.random(in: .min ... .max)
    }
    if let baseURL {
      guard let url = URL(string: baseURL), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil
      else {
        throw CommandLineError.usage("--base-url '\(baseURL)' is not an http(s) URL")
      }
    }
    let output = try OutputTarget(path: out)
    let catalog = try RenderCommand.loadCatalog(catalog)
    let now = Date()
    let schedule = try DailySchedule(
      catalog: catalog, from: now, days: days, hour: hour, timeZone: zone, seed: chosenSeed, baseURL: baseURL)
    try output.write(Array(schedule.iCalendar(stamp: now).utf8))
  }
}
