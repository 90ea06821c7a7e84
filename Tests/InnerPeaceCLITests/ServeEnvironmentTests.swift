import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `serve` from the environment, as a container platform runs it.
@Suite(.tags(.live, .process, .binary)) struct ServeEnvironmentTests {
  /// Starts `serve` with `environment` and `arguments`, waits for the line saying where it
  /// listens, runs `body` with the base URL, and stops it; returns what it wrote on stderr.
  func withServer(
    _ arguments: [String], environment: [String: String], _ body: (String) async throws -> Void
  ) async throws -> String {
    let server = try ServeProcess(arguments, environment: environment)
    let url = try #require(server.waitUntilListening(), "the server did not start: \(server.stop())")
    try await body(url)
    return server.stop()
  }

  func get(_ url: String, userAgent: String = "ServeEnvironmentTests") async throws -> Int {
    var request = URLRequest(url: try #require(URL(string: url)))
    request.setValue(userAgent, forHTTPHeaderField: "User-Agent")
    let (_, response) = try await URLSession.shared.data(for: request)
    return (response as? HTTPURLResponse)?.statusCode ?? 0
  }

  /// PORT picks the port; INNERPEACE_ variables set options and flags (the signing key file and
  /// --sign-all-images too); JSON log lines carry the request's fields.
  @Test func environmentConfiguresTheServer() async throws {
    let port = try ServeLogTests.freePort()
    let stderr = try await withServer(
      [],
      environment: [
        "PORT": String(port), "INNERPEACE_IN_PROCESS": "true", "INNERPEACE_LOG_FORMAT": "json",
        "INNERPEACE_CONCURRENCY": "1", "INNERPEACE_SIGNING_KEY_FILE": Self.keyFile.path,
        "INNERPEACE_SIGN_ALL_IMAGES": "1",
      ]
    ) { base in
      #expect(base == "http://127.0.0.1:\(port)")
      let status = try await get(base + "/healthz?", userAgent: "Probe/2.0")
      #expect(status == 200)
      // The key file and --sign-all-images from their variables: an unsigned catalog card is refused.
      let unsigned = try await get(base + "/cards/0.png")
      #expect(unsigned == 403)
    }
    let requestLine = try #require(stderr.split(separator: "\n").first { $0.contains("\"message\":\"request\"") })
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(requestLine.utf8)) as? [String: Any], "\(requestLine)")
    #expect(object["path"] as? String == "/healthz")
    // Numbers as numbers.
    #expect(requestLine.contains(#""status":200,"#), "\(requestLine)")
    #expect(object["user_agent"] as? String == "Probe/2.0")
    #expect(object["client"] as? String == "127.0.0.1")
    #expect(object["method"] as? String == "GET")
    for key in ["time", "level", "query", "bytes", "ms"] { #expect(object[key] != nil, "\(key)") }
  }

  /// The command line wins: a bad INNERPEACE_PORT is not even read when --port is given.
  @Test func flagsWinOverTheEnvironment() async throws {
    _ = try await withServer(
      ["--port", "0", "--in-process"], environment: ["INNERPEACE_PORT": "not-a-port", "PORT": "also-bad"]
    ) { base in
      let status = try await get(base + "/healthz")
      #expect(status == 200)
    }
  }

  /// Bad values are one-line errors naming the variable, before anything starts.
  @Test func badValuesAreStartUpErrors() throws {
    for (environment, fragment) in [
      (["INNERPEACE_PORT": "abc"], "INNERPEACE_PORT=abc"),
      (["PORT": "abc"], "PORT=abc"),
      (["INNERPEACE_IN_PROCESS": "maybe"], "INNERPEACE_IN_PROCESS=maybe"),
      (["LOG_LEVEL": "DEBUGX"], "DEBUGX"),
      (["INNERPEACE_LOG_FORMAT": "xml"], "xml"),
      (["INNERPEACE_REMINDER_HOUR": "25"], "25"),
    ] {
      let result = try CLI.run(["serve"], environment: environment, timeout: 30)
      #expect(result.status == 64, "\(environment): \(result.stderr)")
      #expect(result.stderrLines.count == 1 && result.stderr.contains(fragment), "\(environment): \(result.stderr)")
    }
    // A level in capitals is a level.
    let capitals = try CLI.run(["serve", "--port=-1"], environment: ["LOG_LEVEL": "DEBUG"], timeout: 30)
    #expect(capitals.stderr.contains("--port -1"), "\(capitals.stderr)")
  }

  /// `serve`'s options and flags from the command's own description (`--experimental-dump-help`),
  /// as long names with whether each is a flag.
  static func serveOptions() throws -> [(name: String, isFlag: Bool)] {
    let dump = try CLI.run(["serve", "--experimental-dump-help"])
    let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout)) as? [String: Any])
    let arguments = try #require((root["command"] as? [String: Any])?["arguments"] as? [[String: Any]])
    return arguments.compactMap { argument in
      guard let names = argument["names"] as? [[String: Any]],
        let long = names.first(where: { $0["kind"] as? String == "long" })?["name"] as? String,
        long != "help", long != "version"
      else { return nil }
      return (long, argument["kind"] as? String == "flag")
    }
  }

  static func variable(_ option: String) -> String {
    "INNERPEACE_" + option.uppercased().replacingOccurrences(of: "-", with: "_")
  }

  /// A URL-signing key file (32 bytes and more), for the runs that need a readable one.
  static let keyFile: URL = {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("serve-env-key-\(UUID().uuidString)")
    _ = FileManager.default.createFile(atPath: url.path, contents: Data(String(repeating: "k", count: 40).utf8))
    return url
  }()

  /// A value each option takes (numbers take 1).
  static func goodValue(_ option: String) -> String {
    [
      "host": "127.0.0.1", "catalog": "/nonexistent-catalog", "public-url": "https://cards.example.com",
      "signing-key-file": keyFile.path, "time-zone": "UTC", "log-level": "info", "log-format": "json",
      "worker-memory-mb": "72", "cors-origin": "https://www.example.com", "metrics-address": "127.0.0.1:0",
    ][option] ?? "1"
  }

  /// A value each option refuses at start-up (a flag: not a boolean; the host: empty; an allowed
  /// host: not a host).
  static func badValue(_ option: String, isFlag: Bool) -> String {
    isFlag ? "maybe" : option == "host" ? "" : option == "allowed-host" ? "a/b" : "lots"
  }

  /// Every serve option and flag has its variable: a value it refuses, from the variable alone,
  /// stops start-up with one line naming the variable, whatever stage refuses it (parsing, range
  /// checks, the time zone, the key file, the catalog).
  @Test func everyOptionHasItsVariable() throws {
    let options = try Self.serveOptions()
    let names = Set(options.map(\.name))
    // The list is the command's own: options of an option group and new flags are in it.
    for expected in [
      "host", "port", "catalog", "concurrency", "signing-key-file", "sign-all-images", "in-process", "log-level",
      "log-format", "drain-timeout", "trust-forwarded-headers", "public-url",
    ] {
      #expect(names.contains(expected), "\(expected) is not in \(names.sorted())")
    }
    for option in options {
      let variable = Self.variable(option.name)
      let value = Self.badValue(option.name, isFlag: option.isFlag)
      let result = try CLI.run(["serve"], environment: [variable: value], timeout: 30)
      #expect(result.status != 0, "\(variable)=\(value) started the server")
      #expect(
        result.stderrLines.count == 1 && result.stderr.contains("\(variable)=\(value)"),
        "\(variable)=\(value): \(result.stderr)")
    }
  }

  /// The command line wins for every option: with the flag given, its variable (holding a value
  /// the option refuses) is not read; the run stops at another, deliberate error instead.
  @Test func everyFlagWinsOverItsVariable() throws {
    for option in try Self.serveOptions() {
      let variable = Self.variable(option.name)
      let value = Self.badValue(option.name, isFlag: option.isFlag)
      let given = option.isFlag ? ["--\(option.name)"] : ["--\(option.name)", Self.goodValue(option.name)]
      // A refusal the run must reach (the range checks come after every option is read).
      let stop = option.name == "reminder-hour" ? ["--port=-1"] : ["--reminder-hour", "99"]
      let result = try CLI.run(["serve"] + given + stop, environment: [variable: value], timeout: 30)
      #expect(result.status == 64, "\(option.name): \(result.stderr)")
      #expect(
        result.stderr.contains(option.name == "reminder-hour" ? "--port -1" : "--reminder-hour 99")
          && !result.stderr.contains(variable), "\(option.name): \(result.stderr)")
    }
  }

  /// A value refused after parsing (a range, a zone, a key file, a missing key) names the
  /// variable that set it, and only that one; PORT is named as itself.
  @Test func laterRefusalsNameTheirVariable() throws {
    for (environment, arguments, expected) in [
      (["INNERPEACE_PORT": "70000"], [], "INNERPEACE_PORT=70000: --port 70000"),
      (["PORT": "70000"], [], "PORT=70000: --port 70000"),
      (["INNERPEACE_TIME_ZONE": "Mars/Base"], [], "INNERPEACE_TIME_ZONE=Mars/Base: "),
      (["INNERPEACE_SIGNING_KEY_FILE": "/nonexistent/key"], [], "INNERPEACE_SIGNING_KEY_FILE=/nonexistent/key: "),
      (["INNERPEACE_SIGN_ALL_IMAGES": "true"], [], "INNERPEACE_SIGN_ALL_IMAGES=true: --sign-all-images needs a key"),
      (["LOG_LEVEL": "loud"], [], "LOG_LEVEL=loud: not a valid value for --log-level"),
      (
        ["INNERPEACE_CACHE_MB": "1"], ["--background-cache-mb", "100", "--worker-memory-mb", "50"],
        "--worker-memory-mb 50"
      ),
    ] {
      let result = try CLI.run(["serve"] + arguments, environment: environment, timeout: 30)
      #expect(result.status == 64, "\(environment): \(result.stderr)")
      #expect(
        result.stderrLines.count == 1 && result.stderr.hasPrefix("innerpeace: error: ")
          && result.stderr.contains(expected), "\(environment): \(result.stderr)")
    }
    // --background-cache-mb is not --cache-mb: the variable of the shorter name is not blamed.
    let other = try CLI.run(
      ["serve", "--background-cache-mb", "100", "--worker-memory-mb", "50"],
      environment: ["INNERPEACE_CACHE_MB": "1"], timeout: 30)
    #expect(!other.stderr.contains("INNERPEACE_CACHE_MB"), "\(other.stderr)")
    // The key text keeps its own variable: INNERPEACE_SIGNING_KEY is the key, not an option.
    let short = try CLI.run(["serve"], environment: ["INNERPEACE_SIGNING_KEY": "short"], timeout: 30)
    #expect(short.status == 64 && short.stderr.contains("INNERPEACE_SIGNING_KEY"), "\(short.stderr)")
  }
}
