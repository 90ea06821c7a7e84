import Foundation
import Testing

/// `innerpeace render` with the texts of issue 17, end to end through the built binary: each
/// runs in a child process, so a crash fails only its test.
@Suite("innerpeace render: bidi and invisible text", .tags(.process, .binary))
struct TextRulesCommandTests {
  init() throws {
    try #require(innerpeaceBinary != nil, "\(CLI.Missing().description)")
  }

  /// A thousand RLE and one letter segfaulted `render` (exit 139) inside libfribidi: now it is
  /// refused with one line and the usage status, as the quote and as the author.
  @Test(arguments: [
    ["--text", String(repeating: "\u{202B}", count: 1_000) + "a"],
    ["--text", "Peace.", "--author", String(repeating: "\u{2067}\u{202E}", count: 90) + "a"],
  ])
  func thousandBidiControlsAreRefused(options: [String]) throws {
    let result = try CLI.run(["render", "--out", "-", "--seed", "1"] + options)
    #expect(result.status == 64, "exit \(result.status): \(result.stderr.suffix(400))")
    #expect(result.stdout.isEmpty)
    #expect(result.stderrLines.count == 1 && result.stderr.contains("bidi"), "\(result.stderr)")
  }

  /// Bidi controls within the limits still render.
  @Test func nestedIsolatesWithinTheLimitRender() throws {
    let text = "Peace \u{2067}\u{5E9}\u{5DC}\u{5D5}\u{5DD} \u{2066}is\u{2069}\u{2069} here."
    let result = try CLI.run(["render", "--out", "-", "--seed", "1", "--size", "400x300", "--text", text])
    #expect(result.status == 0, "exit \(result.status): \(result.stderr)")
    #expect(pngHeader(result.stdout) != nil)
  }

  /// Invisible characters only: the empty text's message, word for word.
  @Test func invisibleTextIsRefusedLikeEmptyText() throws {
    let empty = try CLI.run(["render", "--out", "-", "--text", "   "])
    let invisible = try CLI.run(["render", "--out", "-", "--text", "\u{200B}\u{2060}\u{FEFF}\u{3164}\u{2800}\u{AD}"])
    #expect(invisible.status == 64 && empty.status == 64)
    #expect(invisible.stderr == empty.stderr && invisible.stderr.contains("nothing visible"), "\(invisible.stderr)")
    #expect(invisible.stdout.isEmpty)
  }
}
