import Foundation
import Testing

@testable import InnerPeace

/// Renders on many short-lived threads at once. Each thread has its own Pango font map, made on
/// its first render and freed when the thread ends, so fonts (the bundled face and the fallback
/// faces of CJK, Arabic, emoji…) are loaded and released on some threads while others draw with
/// the same font files.
@Suite struct ThreadedFontTests {
  static let texts = [
    "静かな心は、すべての答えを知っている。",
    "السلام يأتي من الداخل، فلا تبحث عنه في الخارج.",
    "Peace 🌿 comes from within 🕊️",
    "Ἐν ἡσυχίᾳ καὶ ἐν πεποιθήσει ἔσται ἡ ἰσχὺς ὑμῶν.",
    "평화는 내면에서 온다.",
    "शांति भीतर से आती है।",
    "Do not dwell in the past, do not dream of the future.",
    "שלום בא מבפנים.",
    "ความสงบมาจากภายใน",
    "მშვიდობა შიგნიდან მოდის.",
    "Խաղաղությունը գալիս է ներսից։",
    "ሰላም ከውስጥ ይመጣል።",
    "শান্তি ভেতর থেকে আসে।",
    "அமைதி உள்ளிருந்து வருகிறது.",
    "សន្តិភាពមកពីខាងក្នុង។",
    "Мир приходит изнутри.",
    "靜心自在，萬物皆安。",
    "ශාන්තිය ඇතුළතින් පැමිණේ.",
    "ಶಾಂತಿ ಒಳಗಿನಿಂದ ಬರುತ್ತದೆ.",
  ]

  @Test func shortLivedThreadsRenderTogether() throws {
    let renderer = Fixtures.renderer
    let size = try CanvasSize(width: 240, height: 200)
    let failures = Locked<[String]>([])
    for round in 0..<Self.rounds {
      let done = DispatchGroup()
      for worker in 0..<Self.threadsPerRound {
        done.enter()
        let thread = Thread {
          defer { done.leave() }
          let text = Self.texts[(round + worker) % Self.texts.count]
          do {
            let card = try renderer.render(
              CardRequest(
                preset: .custom(size), quote: .text(text, author: "Anonymous"), picture: .named("aqua.jpg"),
                seed: UInt64(worker), format: .png))
            if card.bytes.isEmpty { failures.withLock { $0.append("\(round)/\(worker): empty") } }
          } catch {
            failures.withLock { $0.append("\(round)/\(worker): \(error)") }
          }
        }
        thread.start()
      }
      done.wait()
    }
    #expect(failures.withLock { $0 } == [])
  }

  /// A fonts folder registered while other threads lay out and draw: fontconfig's
  /// `FcConfigAppFontAddDir` grows the font set that `FcFontSort` (Pango's font loading) reads, so
  /// the registration must hold ``FontLock`` like every other call that reads it. Without it the
  /// suite crashed in `libfontconfig` (a sort comparator reading a freed node) when
  /// `ContentVersionTests` installed a copy of the fonts while server tests rendered.
  @Test func registeringFontsWhileOthersRender() throws {
    let renderer = Fixtures.renderer
    let bundled = URL(fileURLWithPath: renderer.bundledFontPath)
    let size = try CanvasSize(width: 240, height: 200)
    let failures = Locked<[String]>([])
    let stop = Locked(false)
    let done = DispatchGroup()
    for worker in 0..<2 {
      done.enter()
      Thread {
        defer { done.leave() }
        var round = 0
        while !stop.withLock({ $0 }) && round < 400 {
          let text = Self.texts[(round * 2 + worker) % Self.texts.count]
          do {
            _ = try renderer.fitText(text, author: "Anonymous", preset: .custom(size))
          } catch {
            failures.withLock { $0.append("\(worker)/\(round): \(error)") }
          }
          _ = FontSetup.fallbackFontFiles(bundledFontPath: renderer.bundledFontPath)
          round += 1
        }
      }.start()
    }
    try withTemporaryFolder("innerpeace-fonts") { root in
      for index in 0..<Self.registrations {
        let folder = root.appendingPathComponent("Fonts\(index)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: bundled, to: folder.appendingPathComponent(FontSetup.fileName))
        #expect(try FontSetup.register(fontsDirectory: folder).hasPrefix(folder.path))
      }
      stop.withLock { $0 = true }
      done.wait()
    }
    #expect(failures.withLock { $0 } == [])
  }

  static let rounds = Int(ProcessInfo.processInfo.environment["INNERPEACE_THREAD_ROUNDS"] ?? "") ?? 6
  static let threadsPerRound = 8
  static let registrations = Int(ProcessInfo.processInfo.environment["INNERPEACE_FONT_REGISTRATIONS"] ?? "") ?? 24
}
