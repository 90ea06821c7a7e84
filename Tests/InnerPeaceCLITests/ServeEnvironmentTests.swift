import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `serve` from the environment, as a container platform runs it.
@Suite struct ServeEnvironmentTests {
  /// Starts `serve` with `environment` and `arguments`, waits for its port, runs `body` with the
  /// base URL, and stops it; returns what it wrote on stderr.
  func withServer(
    _ arguments: [String], environment: [String: String], _ body: (String) async throws -> Void
  ) async throws -> String {
    let binary = try #require(innerpeaceBinary, "run swift build first")
    let log = FileManager.default.temporaryDirectory.appendingPathComponent("serve-env-\(UUID().uuidString).log")
    FileManager.default.createFile(atPath: log.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: log) }
    let process = Process()
    process.executableURL = binary
    process.arguments = ["serve"] + arguments
    var env = ProcessInfo.processInfo.environment
    for (key, value) in environment { env[key] = value }
    process.environment = env
    process.standardError = try FileHandle(forWritingTo: log)
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    defer {
      if process.isRunning { process.terminate() }
      process.waitUntilExit()
    }
    var base: String?
    // Generous: on a loaded machine a debug server took over 30 s to start beside the suite.
    let deadline = Date().addingTimeInterval(120)
    while base == nil && Date() < deadline && process.isRunning {
      let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
      if let range = text.range(of: #"listening on (http://[0-9.:]+)"#, options: .regularExpression) {
        base = String(text[range].dropFirst("listening on ".count))
      } else {
        try await Task.sleep(for: .milliseconds(100))
      }
    }
    let url = try #require(base, "the server did not start: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
    try await body(url)
    process.terminate()
    process.waitUntilExit()
    return (try? String(contentsOf: log, encoding: .utf8)) ?? ""
  }

  func get(_ url: String, userAgent: String = "ServeEnvironmentTests") async throws -> Int {
    var request = URLRequest(url: try #require(URL(string: url)))
    request.setValue(userAgent, forHTTPHeaderField: "User-Agent")
    let (_, response) = try await URLSession.shared.data(for: request)
    return (response as? HTTPURLResponse)?.statusCode ?? 0
  }

  /// PORT picks the port; INNERPEACE_ variables set options and flags; JSON log lines carry the
  /// request's fields.
  @Test func environmentConfiguresTheServer() async throws {
    let port = Int.random(in: 20_000...40_000)
    let stderr = try await withServer(
      [],
      environment: [
        "PORT": String(port), "INNERPEACE_IN_PROCESS": "true", "INNERPEACE_LOG_FORMAT": "json",
        "INNERPEACE_CONCURRENCY": "1",
      ]
    ) { base in
      #expect(base == "http://127.0.0.1:\(port)")
      let status = try await get(base + "/healthz?", userAgent: "Probe/2.0")
      #expect(status == 200)
    }
    let requestLine = try #require(stderr.split(separator: "\n").first { $0.contains("\"message\":\"request\"") })
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(requestLine.utf8)) as? [String: String], "\(requestLine)")
    #expect(object["path"] == "/healthz")
    #expect(object["status"] == "200")
    #expect(object["user_agent"] == "Probe/2.0")
    #expect(object["client"] == "127.0.0.1")
    #expect(object["method"] == "GET")
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

  /// Every serve option has its variable: the help lists the environment rule, and each option of
  /// the command's own description maps to INNERPEACE_ and its name.
  @Test func everyOptionHasItsVariable() throws {
    let dump = try CLI.run(["serve", "--experimental-dump-help"])
    let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout)) as? [String: Any])
    let arguments = try #require((root["command"] as? [String: Any])?["arguments"] as? [[String: Any]])
    var flags = 0
    for argument in arguments {
      guard let names = argument["names"] as? [[String: Any]],
        let long = names.first(where: { $0["kind"] as? String == "long" })?["name"] as? String,
        long != "help", long != "version"
      else { continue }
      let variable = "INNERPEACE_" + long.uppercased().replacingOccurrences(of: "-", with: "_")
      // A value the option cannot take, from the variable alone, must be refused naming it.
      guard argument["kind"] as? String == "flag" else { continue }
      flags += 1
      let result = try CLI.run(["serve"], environment: [variable: "maybe"], timeout: 30)
      #expect(result.status == 64 && result.stderr.contains(variable), "\(long): \(result.stderr)")
    }
    #expect(flags >= 3)
    for variable in ["INNERPEACE_CONCURRENCY", "INNERPEACE_MAX_CONNECTIONS", "INNERPEACE_DRAIN_TIMEOUT"] {
      let result = try CLI.run(["serve"], environment: [variable: "lots"], timeout: 30)
      #expect(result.status == 64 && result.stderr.contains(variable), "\(variable): \(result.stderr)")
    }
  }
}
