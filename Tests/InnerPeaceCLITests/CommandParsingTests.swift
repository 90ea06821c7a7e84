import ArgumentParser
import Foundation
import InnerPeace
import Testing

@testable import InnerPeaceCLI

/// The command line parsed in this process (`parseAsRoot`, and `serve`'s environment through
/// ``ServeEnvironment``), for the fast loop; the suites that run the built binary check the same
/// end to end, with what the command then does.
@Suite struct CommandParsingTests {
  @Test func renderOptionsParse() throws {
    let command = try InnerPeaceCommand.parseAsRoot([
      "render", "--out", "card.png", "--preset", "og", "--quote", "3", "--picture", "aqua.jpg", "--transparent",
    ])
    let render = try #require(command as? RenderCommand)
    #expect(render.out == "card.png")
    #expect(render.preset == .og)
    #expect(render.quote == 3)
    #expect(render.picture == "aqua.jpg")
    #expect(render.transparent)
  }

  @Test(arguments: [["render"], ["render", "--out", "x.png", "--quote", "many"], ["serve", "--port", "http"]])
  func badCommandLinesAreRefused(arguments: [String]) {
    #expect(throws: (any Error).self) { try InnerPeaceCommand.parseAsRoot(arguments) }
  }

  /// PORT and INNERPEACE_ variables set `serve`'s options and flags, each traced to its variable.
  @Test func environmentSetsServeOptions() throws {
    let (command, sources) = try ServeEnvironment.parse(
      commandLine: [],
      environment: [
        "PORT": "9000", "INNERPEACE_IN_PROCESS": "true", "INNERPEACE_LOG_FORMAT": "json", "INNERPEACE_CONCURRENCY": "1",
      ])
    let serve = try #require(command as? ServeCommand)
    #expect(serve.port == 9000)
    #expect(serve.inProcess)
    #expect(serve.logFormat == .json)
    #expect(serve.concurrency == 1)
    #expect(
      Set(sources.map(\.variable)) == [
        "PORT", "INNERPEACE_IN_PROCESS", "INNERPEACE_LOG_FORMAT", "INNERPEACE_CONCURRENCY",
      ])
  }

  /// The command line wins: a variable of an option given on the command line is not even read.
  @Test func flagsWinOverTheEnvironment() throws {
    let (command, sources) = try ServeEnvironment.parse(
      commandLine: ["--port", "0", "--in-process"],
      environment: ["INNERPEACE_PORT": "not-a-port", "PORT": "also-bad", "INNERPEACE_IN_PROCESS": "maybe"])
    let serve = try #require(command as? ServeCommand)
    #expect(serve.port == 0)
    #expect(serve.inProcess)
    #expect(sources.isEmpty, "\(sources)")
  }

  /// A value the parser refuses is one error naming the variable and its value.
  @Test(arguments: [
    ("INNERPEACE_PORT", "abc"), ("PORT", "abc"), ("INNERPEACE_IN_PROCESS", "maybe"), ("INNERPEACE_LOG_FORMAT", "xml"),
    ("LOG_LEVEL", "DEBUGX"),
  ])
  func badValuesNameTheirVariable(variable: String, value: String) {
    #expect {
      try ServeEnvironment.parse(commandLine: [], environment: [variable: value])
    } throws: { error in
      (error as? CommandLineError)?.description.contains("\(variable)=\(value)") == true
    }
  }

  /// Every option and flag of `serve` has its variable, read at parse time.
  @Test func everyServeOptionHasItsVariable() throws {
    let options = ServeEnvironment.options
    for expected in ["host", "port", "concurrency", "in-process", "log-format", "drain-timeout", "public-url"] {
      #expect(options.contains { $0.name == expected }, "\(expected) is not in \(options.map(\.name))")
    }
    let values = [
      "host": "127.0.0.1", "catalog": "/nonexistent-catalog", "public-url": "https://cards.example.com",
      "signing-key-file": "/nonexistent/key", "time-zone": "UTC", "log-level": "info", "log-format": "json",
      "allowed-host": "cards.example.com",
    ]
    for option in options {
      let variable = ServeEnvironment.variable(for: option.name)
      let value = option.isFlag ? "true" : values[option.name] ?? "1"
      let (_, sources) = try ServeEnvironment.parse(commandLine: [], environment: [variable: value])
      #expect(
        sources == [ServeEnvironment.Source(option: option.name, variable: variable, value: value)],
        "\(variable)=\(value): \(sources)")
    }
  }
}
