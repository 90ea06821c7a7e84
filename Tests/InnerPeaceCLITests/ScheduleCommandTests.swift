import Foundation
import InnerPeace
import Testing

/// `innerpeace schedule`, end to end, its output checked by a real iCalendar parser (Python's
/// `icalendar`, through Tests/ical/validate_ics.py).
@Suite("innerpeace schedule", .tags(.process, .binary))
struct ScheduleCommandTests {
  static let validator = packageRoot.appendingPathComponent("Tests/ical/validate_ics.py")

  /// A Python that can `import icalendar`: the test tools' virtualenv (`.build/pytools`, made by
  /// `scripts/install-deps.sh --with-test-tools` with icalendar from PyPI), then /usr/bin/python3,
  /// then python3 on the PATH.
  static let python: [String]? = {
    let tools = packageRoot.appendingPathComponent(".build/pytools/bin/python").path
    for candidate in [[tools], ["/usr/bin/python3"], ["/usr/bin/env", "python3"]] {
      guard FileManager.default.isExecutableFile(atPath: candidate[0]) else { continue }
      let check = try? ExternalTool.run(candidate[0], Array(candidate.dropFirst()) + ["-c", "import icalendar"])
      if check?.status == 0 { return candidate }
    }
    return nil
  }()

  init() throws {
    try #require(innerpeaceBinary != nil, "\(CLI.Missing().description)")
  }

  static func requirePython() throws -> [String] {
    try #require(
      python,
      "no Python with the icalendar package: tried /usr/bin/python3 and python3; run `pip install icalendar`")
  }

  /// Runs validate_ics.py; returns its exit status and output.
  static func validate(_ file: URL, _ options: [String]) throws -> (status: Int32, output: String) {
    let python = try requirePython()
    let result = try ExternalTool.run(
      python[0], Array(python.dropFirst()) + [validator.path, file.path] + options, timeout: 60)
    return (result.status, String(decoding: result.stdout, as: UTF8.self) + result.stderr)
  }

  static func expectValid(
    _ file: URL, _ options: [String], sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let (status, output) = try validate(file, options)
    #expect(
      status == 0, "validate_ics.py \(options.joined(separator: " ")):\n\(output)", sourceLocation: sourceLocation)
    #expect(
      output.wholeMatch(of: #/(?s).*\b[1-9]\d* passed, 0 failed\n/#) != nil, "validator output: \(output)",
      sourceLocation: sourceLocation)
  }

  /// The catalog as `innerpeace quotes --json` gives it, for checking descriptions.
  static func writeQuotes(to file: URL) throws {
    let quotes = try CLI.run(["quotes", "--json"])
    #expect(quotes.status == 0, "\(quotes.stderr)")
    try Data(quotes.stdout).write(to: file)
  }

  /// The VEVENTs' lines (unfolded), without DTSTAMP (the moment the file was made).
  static func events(_ text: String) -> [[String]] {
    let lines = text.replacingOccurrences(of: "\r\n ", with: "").components(separatedBy: "\r\n")
    var events: [[String]] = []
    var current: [String]?
    for line in lines {
      if line == "BEGIN:VEVENT" { current = [] }
      if line == "END:VEVENT", let event = current {
        events.append(event)
        current = nil
      }
      if current != nil, !line.hasPrefix("DTSTAMP:") { current!.append(line) }
    }
    return events
  }

  // MARK: Valid calendars

  @Test func parisCalendarIsValidICalendar() throws {
    try withTemporaryFolder("innerpeace-schedule") { folder in
      let file = folder.appendingPathComponent("daily.ics")
      let quotes = folder.appendingPathComponent("quotes.json")
      let result = try CLI.run([
        "schedule", "--days", "5", "--seed", "7", "--tz", "Europe/Paris", "--base-url", "https://cards.example.com",
        "-o", file.path,
      ])
      #expect(result.status == 0, "stderr: \(result.stderr)")
      #expect(result.stdout.isEmpty && result.stderr.isEmpty, "-o writes nothing else: \(result.stderr)")
      #expect(listing(folder) == ["daily.ics"], "leftover files: \(listing(folder))")
      try Self.writeQuotes(to: quotes)
      try Self.expectValid(
        file,
        [
          "--days", "5", "--tz", "Europe/Paris", "--hour", "10", "--base-url", "https://cards.example.com", "--quotes",
          quotes.path,
        ])
    }
  }

  @Test(arguments: [
    ("America/New_York", 6, 7, "https://cards.example.com/"),
    ("Asia/Kolkata", 23, 3, "http://localhost:8080"),
    ("Australia/Lord_Howe", 0, 10, ""),
    ("UTC", 10, 120, ""),
  ])
  func otherZonesHoursAndLengthsAreValid(zone: String, hour: Int, days: Int, baseURL: String) throws {
    try withTemporaryFolder("innerpeace-schedule-zones") { folder in
      var arguments = ["schedule", "--days", "\(days)", "--hour", "\(hour)", "--tz", zone, "--seed", "99"]
      if !baseURL.isEmpty { arguments += ["--base-url", baseURL] }
      let result = try CLI.run(arguments)  // to stdout
      #expect(result.status == 0, "stderr: \(result.stderr)")
      let file = folder.appendingPathComponent("calendar.ics")
      try Data(result.stdout).write(to: file)
      let quotes = folder.appendingPathComponent("quotes.json")
      try Self.writeQuotes(to: quotes)
      try Self.expectValid(
        file,
        ["--days", "\(days)", "--tz", zone, "--hour", "\(hour)", "--quotes", quotes.path]
          + (baseURL.isEmpty ? ["--no-url"] : ["--base-url", baseURL]))
    }
  }

  @Test func defaultsAreSevenDaysAtTenInTheMachinesZone() throws {
    try withTemporaryFolder("innerpeace-schedule-defaults") { folder in
      let result = try CLI.run(["schedule"], environment: ["TZ": "Asia/Tokyo"])
      #expect(result.status == 0, "stderr: \(result.stderr)")
      let file = folder.appendingPathComponent("default.ics")
      try Data(result.stdout).write(to: file)
      try Self.expectValid(file, ["--days", "7", "--tz", "Asia/Tokyo", "--hour", "10", "--no-url"])
    }
  }

  /// The validator is not a rubber stamp: the same file fails against other expectations.
  @Test func theValidatorRejectsWrongCalendars() throws {
    try withTemporaryFolder("innerpeace-schedule-negative") { folder in
      let file = folder.appendingPathComponent("daily.ics")
      let result = try CLI.run([
        "schedule", "--days", "3", "--seed", "1", "--tz", "Europe/Paris", "--base-url", "https://a.example", "-o",
        file.path,
      ])
      #expect(result.status == 0, "stderr: \(result.stderr)")
      try Self.expectValid(file, ["--days", "3", "--tz", "Europe/Paris", "--base-url", "https://a.example"])
      for wrong in [
        ["--days", "4", "--tz", "Europe/Paris", "--base-url", "https://a.example"],
        ["--days", "3", "--tz", "Europe/Paris", "--hour", "11", "--base-url", "https://a.example"],
        ["--days", "3", "--tz", "America/New_York", "--base-url", "https://a.example"],
        ["--days", "3", "--tz", "Europe/Paris", "--base-url", "https://b.example"],
        ["--days", "3", "--tz", "Europe/Paris", "--no-url"],
      ] {
        let (status, output) = try Self.validate(file, wrong)
        #expect(status == 1, "validate_ics.py \(wrong) passed a wrong calendar: \(output)")
        #expect(output.contains("FAIL:"), "\(output)")
      }
      // A damaged file: a second SUMMARY value and a 76-octet line.
      let text = try String(contentsOf: file, encoding: .utf8)
      let damaged = folder.appendingPathComponent("damaged.ics")
      try Data(
        text.replacingOccurrences(of: "SUMMARY:Inner Peace", with: "SUMMARY:Inner Peace!")
          .replacingOccurrences(of: "METHOD:PUBLISH", with: "X-LONG:" + String(repeating: "x", count: 69))
          .utf8
      ).write(to: damaged)
      let (status, output) = try Self.validate(
        damaged, ["--days", "3", "--tz", "Europe/Paris", "--base-url", "https://a.example"])
      #expect(status == 1, "\(output)")
      #expect(output.contains("SUMMARY") && output.contains("76 octets"), "\(output)")
    }
  }

  // MARK: Seeds

  @Test func theSameSeedGivesTheSameEvents() throws {
    let arguments = ["schedule", "--days", "6", "--tz", "Europe/Paris", "--base-url", "https://cards.example.com"]
    let a = try CLI.run(arguments + ["--seed", "42"])
    let b = try CLI.run(arguments + ["--seed", "42"])
    let c = try CLI.run(arguments + ["--seed", "43"])
    #expect(a.status == 0 && b.status == 0 && c.status == 0, "\(a.stderr) \(b.stderr) \(c.stderr)")
    let eventsA = Self.events(String(decoding: a.stdout, as: UTF8.self))
    let eventsB = Self.events(String(decoding: b.stdout, as: UTF8.self))
    let eventsC = Self.events(String(decoding: c.stdout, as: UTF8.self))
    #expect(eventsA.count == 6)
    func quotes(_ events: [[String]]) -> [[String]] {
      events.map { $0.filter { $0.hasPrefix("DESCRIPTION:\"") || $0.hasPrefix("URL:") } }
    }
    // Whole events, unless the two runs straddled 10:00 in Paris (then the days move by one).
    #expect(eventsA == eventsB || quotes(eventsA) == quotes(eventsB), "the same seed gave other events")
    #expect(quotes(eventsA) == quotes(eventsB))
    #expect(quotes(eventsA) != quotes(eventsC), "seeds 42 and 43 gave the same quotes")
  }

  // MARK: Errors

  /// The core's reasons are neutral (`days 0 must be ...`); the command line names its options
  /// (`--days 0 ...`), for schedule and batch alike.
  @Test func rangeErrorsNameTheOptions() throws {
    try withTemporaryFolder("innerpeace-schedule-wording") { folder in
      for (arguments, prefix) in [
        (["schedule", "-o", folder.appendingPathComponent("d.ics").path, "--days", "0"], "--days 0 "),
        (["schedule", "-o", folder.appendingPathComponent("d.ics").path, "--hour", "24"], "--hour 24 "),
        (
          ["batch", "--out-dir", folder.appendingPathComponent("b").path, "--shard", "3/2"],
          "The value '3/2' is invalid for '--shard <I/N>': shard 3/2: I must be from 1 to N"
        ),
        (["batch", "--out-dir", folder.appendingPathComponent("b").path, "--count", "0"], "--count 0 "),
      ] {
        let result = try CLI.run(arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        #expect(result.stderr.hasPrefix("innerpeace: error: " + prefix), "\(arguments): \(result.stderr)")
      }
    }
  }

  @Test(arguments: [
    ["--days", "0"], ["--days", "-1"], ["--days", "100000"], ["--hour", "25"], ["--hour", "24"], ["--hour", "-1"],
    ["--tz", "Mars/Base"], ["--seed", "abc"], ["--base-url", "ftp://cards.example.com"], ["--base-url", "cards"],
  ])
  func badOptionsAreUsageErrors(options: [String]) throws {
    try withTemporaryFolder("innerpeace-schedule-usage") { folder in
      let file = folder.appendingPathComponent("daily.ics")
      let result = try CLI.run(["schedule", "-o", file.path] + options)
      #expect(result.status == 64, "\(options): status \(result.status), stderr: \(result.stderr)")
      #expect(result.stderrLines.count == 1, "\(options): \(result.stderr)")
      #expect(result.stderr.hasPrefix("innerpeace: error: "), "\(options): \(result.stderr)")
      #expect(result.stdout.isEmpty)
      #expect(listing(folder).isEmpty, "\(options) left \(listing(folder))")
    }
  }

  @Test func anUnwritableOutputIsOneErrorAndNoFile() throws {
    try withTemporaryFolder("innerpeace-schedule-unwritable") { folder in
      let result = try CLI.run([
        "schedule", "--seed", "1", "-o", folder.appendingPathComponent("missing/daily.ics").path,
      ])
      #expect(result.status == 73, "stderr: \(result.stderr)")
      #expect(result.stderrLines.count == 1 && result.stderr.hasPrefix("innerpeace: error: "), "\(result.stderr)")
      #expect(listing(folder).isEmpty)
    }
  }
}
