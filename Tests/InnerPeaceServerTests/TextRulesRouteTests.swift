import Foundation
import HummingbirdTesting
import InnerPeace
import InnerPeaceServer
import Testing

/// `/card.{format}?text=&author=` with the texts of issue 17: bidi controls past the limits and
/// text with nothing visible are 400s naming the parameter; an author with nothing visible is no
/// author.
@Suite struct TextRulesRouteTests {
  @Test func bidiControlsAndInvisibleTextAre400() async throws {
    try await withRouter { client, _ in
      let empty = expectError(try await client.get("/card.png?text=%20%20"), status: 400, parameter: "text")
      let invisible = "\u{200B}\u{2060}\u{FEFF}\u{3164}\u{115F}\u{1160}\u{E0041}\u{2800}\u{AD}"
      let refused = expectError(
        try await client.get("/card.png?text=\(queryEncoded(invisible))"), status: 400, parameter: "text")
      #expect(refused["message"] as? String == empty["message"] as? String)
      #expect((refused["message"] as? String)?.contains("nothing visible") == true, "\(refused)")
      let controls = String(repeating: "\u{202B}", count: 1_000) + "a"
      let bidi = expectError(
        try await client.get("/card.png?text=\(queryEncoded(controls))"), status: 400, parameter: "text")
      #expect((bidi["message"] as? String)?.contains("bidi") == true, "\(bidi)")
      let nested = String(repeating: "\u{2067}\u{202E}", count: 90) + "a"
      expectError(
        try await client.get("/card.png?text=hi&author=\(queryEncoded(nested))"), status: 400, parameter: "author")
    }
  }

  @Test func invisibleAuthorIsNoAuthor() async throws {
    try await withRouter { client, _ in
      let reply = try await client.get("/card.png?text=Breathe.&author=\(queryEncoded("\u{200B}\u{3164}"))&w=200&h=200")
      expectCard(reply, format: "png", size: (200, 200))
      // The share message carries no author, so no em dash before one.
      let share = try #require(reply.header("X-Share-Message"))
      #expect(!share.contains("%E2%80%94"), "\(share)")
    }
  }
}
