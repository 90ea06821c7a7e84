import Foundation

/// One process-wide lock around every call that can open a font file or measure or draw a glyph.
///
/// cairo 1.16's FreeType backend keeps at most ten font files open. To open another it closes one
/// it judges idle, and it judges that without the idle font's own mutex (`_has_unlocked_face`
/// reads `lock_count` unlocked): a thread that is just taking that font can go on with a face
/// being freed. Cards draw with a dozen fallback files (CJK, emoji, Arabic, Indic, …), so renders
/// on several threads hit this; the test suite crashed once in `libcairo` with a null face. Pango
/// asks cairo for faces while it lays out (font loading, glyph extents) and draws, so the
/// ``TextLayout`` methods that do either hold this lock. It is recursive, as those methods call
/// one another. Photos, blurs and encoders stay outside it: text is a small part of a render.
enum FontLock {
  private static let lock = NSRecursiveLock()

  /// Runs `body` under the lock.
  static func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body()
  }
}
