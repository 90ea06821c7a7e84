import Foundation
import InnerPeaceServer
import Testing

@testable import InnerPeaceCLI

/// `serve`'s `--cors-origin`, `--metrics-address` and repeated `--signing-key-file`, from the
/// command line and from their variables (a comma-separated list for the repeatable ones).
@Suite struct ServeHTTPOptionsTests {
  @Test func listsFromTheEnvironment() throws {
    let additions = try ServeEnvironment.additions(
      commandLine: [],
      environment: [
        "INNERPEACE_CORS_ORIGIN": "https://a.example, http://localhost:3000,",
        "INNERPEACE_SIGNING_KEY_FILE": "new=/keys/new,/keys/old", "INNERPEACE_METRICS_ADDRESS": "127.0.0.1:9090",
      ])
    let arguments = additions.flatMap(\.arguments)
    for (flag, values) in [
      ("--cors-origin", ["https://a.example", "http://localhost:3000"]),
      ("--signing-key-file", ["new=/keys/new", "/keys/old"]), ("--metrics-address", ["127.0.0.1:9090"]),
    ] {
      let given = arguments.indices.filter { arguments[$0] == flag }.map { arguments[$0 + 1] }
      #expect(given == values, "\(flag): \(arguments)")
    }
    let command = try ServeCommand.parse([
      "--in-process", "--cors-origin", "https://a.example", "--cors-origin", "https://b.example",
      "--metrics-address", "127.0.0.1:0",
    ])
    let configuration = try command.makeConfiguration()
    #expect(configuration.corsOrigins == ["https://a.example", "https://b.example"])
    #expect(configuration.metricsAddress == "127.0.0.1:0")
  }

  /// A bad origin or address, or a key file that cannot be read, from the flag or the variable:
  /// one line, exit 64, before anything listens.
  @Test(.tags(.process, .binary)) func badValuesExit64() throws {
    for (arguments, environment) in [
      (["serve", "--cors-origin", "https://a.example/path"], [String: String]()),
      (["serve"], ["INNERPEACE_CORS_ORIGIN": "https://a.example,a.example"]),
      (["serve", "--metrics-address", "9090"], [:]),
      (["serve", "--signing-key-file", "k1=/nonexistent/key"], [:]),
    ] {
      let result = try CLI.run(arguments + ["--port", "0", "--in-process"], environment: environment)
      #expect(result.status == 64, "\(arguments) \(environment): \(result.stderr)")
      #expect(result.stderrLines.count == 1, "\(result.stderr)")
      #expect(!result.stderr.contains("listening"))
      if let variable = environment.keys.first { #expect(result.stderr.contains(variable), "\(result.stderr)") }
    }
  }
}
