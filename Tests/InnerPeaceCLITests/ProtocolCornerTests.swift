import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Corners of the command line's protocol: picture names in any Unicode normalization form, and
/// progress on terminals that cannot draw the bar.
@Suite(.tags(.process, .binary)) struct ProtocolCornerTests {
  typealias Reader = BatchFolderReader

  /// A catalog photo named `café.jpg` in NFC is found when asked for in NFD (`cafe` + U+0301),
  /// and the card is the one its NFC name makes.
  @Test func aPictureNameInNFDFindsTheNFCFile() throws {
    try withTemporaryFolder("innerpeace-nfc") { root in
      let catalog = root.appendingPathComponent("catalog")
      try FileManager.default.createDirectory(at: catalog, withIntermediateDirectories: true)
      let nfc = "caf\u{E9}.jpg"
      let nfd = "cafe\u{301}.jpg"
      #expect(Array(nfc.utf8) != Array(nfd.utf8))
      try Data(contentsOf: packageRoot.appendingPathComponent("Resources/aqua.jpg"))
        .write(to: catalog.appendingPathComponent(nfc))
      try Data("[\"\(nfc)\"]".utf8).write(to: catalog.appendingPathComponent("pictures.json"))
      try Data(#"[{"text": "Calm and near.", "author": "Someone"}]"#.utf8)
        .write(to: catalog.appendingPathComponent("quotes.json"))
      let common = ["render", "--out", "-", "--catalog", catalog.path, "--quote", "0", "--size", "300x200", "-v"]
      let asListed = try CLI.run(common + ["--picture", nfc])
      #expect(asListed.status == 0, "\(asListed.stderr)")
      let decomposed = try CLI.run(common + ["--picture", nfd])
      #expect(decomposed.status == 0, "NFD name refused: \(decomposed.stderr)")
      #expect(decomposed.stdout == asListed.stdout, "the NFD name made another card")
      // The card names the picture as the catalog lists it.
      #expect(
        Data(decomposed.stderr.utf8).range(of: Data("picture \(nfc)".utf8)) != nil,
        "the card does not name the picture as listed: \(decomposed.stderr)")
    }
  }

  /// `TERM=dumb` cannot redraw a line: plain progress lines, no carriage returns or escapes.
  @Test(.enabled(if: ExternalTool.scriptAvailable, "needs util-linux script for a terminal"))
  func aDumbTerminalGetsPlainLines() throws {
    try withTemporaryFolder("innerpeace-batch-dumb") { folder in
      let (status, output) = try ExternalTool.runOnTerminalWithStatus(
        ["batch", "--out-dir", folder.path, "--count", "2", "--preset", "320x200", "--jobs", "1"],
        environment: ["COLUMNS": "100", "TERM": "dumb"])
      #expect(status == 0, "\(output)")
      let text = output.replacingOccurrences(of: "\r\n", with: "\n")
      #expect(!text.contains("\r"), "the bar redraws on a dumb terminal: \(output.debugDescription)")
      #expect(!text.contains("\u{1B}"), "escape sequences on a dumb terminal: \(output.debugDescription)")
      #expect(Reader.summaries(text) == [.init(rendered: 2, skipped: 0, failed: 0)], "\(output.debugDescription)")
    }
  }

  /// A terminal narrower than the bar gets a short form that fits, so each redraw stays on its
  /// line.
  @Test(.enabled(if: ExternalTool.scriptAvailable, "needs util-linux script for a terminal"), arguments: [5, 30])
  func aNarrowTerminalGetsAShortBar(columns: Int) throws {
    try withTemporaryFolder("innerpeace-batch-narrow") { folder in
      let (status, output) = try ExternalTool.runOnTerminalWithStatus(
        ["batch", "--out-dir", folder.path, "--count", "2", "--preset", "320x200", "--jobs", "1"],
        environment: ["COLUMNS": String(columns), "TERM": "xterm"])
      #expect(status == 0, "\(output)")
      let redraws = output.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n").first ?? ""
      // The redraws, the summary (a line of its own, after the bar is cleared) left out.
      let pieces = redraws.split(separator: "\r").map { $0.replacingOccurrences(of: "\u{1B}[K", with: "") }
        .filter { !$0.hasPrefix("batch: ") }
      #expect(pieces.contains { !$0.isEmpty }, "no progress drawn: \(output.debugDescription)")
      for piece in pieces {
        #expect(piece.count < columns, "a redraw of \(piece.count) columns on \(columns): \(piece.debugDescription)")
      }
    }
  }
}
