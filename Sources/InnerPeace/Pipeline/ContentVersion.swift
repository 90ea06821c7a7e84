import CInnerPeace
import Foundation

extension ContentSources {
  /// The content version: SHA-256 over everything here, as 12 hex digits (48 bits: a new version
  /// never collides with the few a cache has seen): the look version, the quotes, the picture of
  /// each quote (``Catalog/picture(forQuote:offset:)``), each picture's name, bytes and focus (and
  /// the focus estimator's version), the bundled and fallback fonts and the hyphenation patterns
  /// by the digests of their bytes (``FileDigests``). No path counts, so the same build and
  /// catalog give the same version in any folder, on any machine whose fallback fonts are the
  /// same files. A file that cannot be read (the catalog checked it at load, so it has gone
  /// since) counts as its name, unreadable. The service's card URLs carry it as `v=`, and a
  /// batch run records it, so that `--resume` never keeps cards of other content.
  public func version() -> String {
    let hash = SHA256Checksum()
    func add(_ text: String) {
      hash.update(Array(text.utf8))
      hash.update([0])
    }
    add("innerpeace-look-\(lookVersion)")
    add("quotes \(quotes.count)")
    for quote in quotes {
      add(quote.text)
      add(quote.author)
    }
    add("quote pictures \(quotePictures.count)")
    for picture in quotePictures { add(picture) }
    add("pictures \(pictureFiles.count)")
    for (name, file) in pictureFiles {
      add(name)
      // Photos by their bytes, read again: a photo can change between two starts with the same
      // size and time.
      add(FileDigests.sha256(of: file, cached: false) ?? "unreadable")
    }
    // Where each photo's subject is, and the estimator that placed those not given: the crop
    // follows them.
    add("focus estimator \(focusEstimatorVersion)")
    for focus in pictureFoci { add("focus \(focus.x) \(focus.y) \(focus.estimated ? "estimated" : "given")") }
    add("fonts \(bundledFontFiles.count)")
    for file in bundledFontFiles { add(FileDigests.sha256(of: file) ?? "unreadable") }
    add("fallback faces \(fallbackFontFiles.count)")
    for (face, files) in fallbackFontFiles {
      add("\(face) \(files.count)")
      for file in files { add(FileDigests.sha256(of: file) ?? "unreadable") }
    }
    add("hyphenation \(hyphenationFiles.count)")
    for (language, file) in hyphenationFiles {
      add(language)
      add(FileDigests.sha256(of: file) ?? "unreadable")
    }
    return String(hash.hexDigest().prefix(12))
  }
}

/// SHA-256 digests of files' bytes, kept per process for files whose device, inode, size and
/// modification time are unchanged: the fallback fonts are some 90 MB, read once.
enum FileDigests {
  private static let known = Locked<[String: (stamp: [Int], digest: String)]>([:])

  /// The hex digest of `file`'s bytes, `nil` when it cannot be read.
  /// - Parameter cached: whether a digest computed before for the same file status may be used.
  static func sha256(of file: URL, cached: Bool = true) -> String? {
    let path = file.path
    guard let status = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }
    let modified = (status[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
    let stamp = [
      (status[.systemNumber] as? Int) ?? 0, (status[.systemFileNumber] as? Int) ?? 0, (status[.size] as? Int) ?? -1,
      Int(modified * 1_000_000_000),
    ]
    if cached, let entry = known.withLock({ $0[path] }), entry.stamp == stamp { return entry.digest }
    guard let handle = try? FileHandle(forReadingFrom: file) else { return nil }
    defer { try? handle.close() }
    let hash = SHA256Checksum()
    while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty { hash.update(Array(chunk)) }
    let digest = hash.hexDigest()
    known.withLock { $0[path] = (stamp, digest) }
    return digest
  }
}

/// SHA-256 through GLib's `GChecksum` (GLib comes with Pango), owning its handle.
final class SHA256Checksum {
  private let checksum: OpaquePointer

  init() { checksum = g_checksum_new(G_CHECKSUM_SHA256) }

  deinit { g_checksum_free(checksum) }

  /// Adds `bytes` to the hashed input.
  func update(_ bytes: [UInt8]) {
    bytes.withUnsafeBufferPointer { buffer in
      g_checksum_update(checksum, buffer.baseAddress, buffer.count)
    }
  }

  /// The digest of everything added, as 64 lowercase hex digits. No input may be added after.
  func hexDigest() -> String { String(cString: g_checksum_get_string(checksum)) }
}
