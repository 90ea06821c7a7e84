/// One image of a batch: which quote, picture and preset, and the file it goes to.
public struct BatchItem: Hashable, Sendable {
  /// Position in the full (unsharded) run: quote-major, then preset in the order given.
  public let position: Int
  public let quoteIndex: Int
  public let picture: String
  public let preset: Preset
  public let format: ImageFormat
  /// A stable, readable file name: `0042-og.png`, `0042-1600x900.webp`.
  public let fileName: String
}

/// A part of a batch run: shard `index` (1-based) of `count`.
public struct Shard: Hashable, Sendable, CustomStringConvertible {
  public let index: Int
  public let count: Int

  /// The whole run.
  public static let all = Shard(uncheckedIndex: 1, count: 1)

  private init(uncheckedIndex: Int, count: Int) {
    self.index = uncheckedIndex
    self.count = count
  }

  /// The most shards a run may be split into.
  public static let maximumCount = 100_000

  /// Shard `index` (1-based) of `count`.
  /// - Throws: ``BatchPlanError/shardOutOfRange(index:count:)`` unless
  ///   1 <= index <= count <= ``maximumCount``.
  public init(index: Int, count: Int) throws(BatchPlanError) {
    guard (1...Shard.maximumCount).contains(count), (1...count).contains(index) else {
      throw .shardOutOfRange(index: index, count: count)
    }
    self.init(uncheckedIndex: index, count: count)
  }

  /// Parses `I/N` with 1 <= I <= N (for a 0-based job index, pass index+1).
  /// - Throws: ``BatchPlanError/shardMalformed(_:)`` or ``BatchPlanError/shardOutOfRange(index:count:)``.
  public init(parsing text: String) throws(BatchPlanError) {
    let parts = text.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else {
      throw .shardMalformed(text)
    }
    try self.init(index: index, count: count)
  }

  /// Whether the item at `position` of the full run belongs to this shard: round robin, so every
  /// shard gets an even share and the shards together are exactly the full run.
  public func contains(position: Int) -> Bool { position % count == index - 1 }

  public var description: String { "\(index)/\(count)" }
}

/// The images a batch run makes, in order: every quote (or the first `count`), each in every
/// preset, each quote on its own picture (``Catalog/picture(forQuote:offset:)``), moved `seed`
/// places along the catalog's list of pictures (seed 0: the picture the service shows the quote
/// on). The same inputs always give the same plan.
public struct BatchPlan: Sendable {
  /// This shard's items, in order.
  public let items: [BatchItem]
  /// How many items the whole run has, over all shards.
  public let totalCount: Int
  /// Whether the cards carry the `— Author` line.
  public let showsAuthor: Bool
  /// How the quote's lines sit on every card.
  public let alignment: TextAlignment
  /// The quotes' language where the caller gives it (``CardRequest/language``).
  public let language: LanguageTag?

  /// - Throws: ``BatchPlanError/presetListEmpty``, or
  ///   ``BatchPlanError/quoteCountOutOfRange(_:maximum:)`` for a count outside 1...quotes.
  public init(
    catalog: Catalog, presets: [Preset], quoteCount: Int? = nil, format: ImageFormat = .png, seed: UInt64 = 0,
    shard: Shard = .all, showsAuthor: Bool = true, alignment: TextAlignment = .natural,
    language: LanguageTag? = nil
  ) throws(BatchPlanError) {
    guard !presets.isEmpty else { throw .presetListEmpty }
    let quotes = quoteCount ?? catalog.quotes.count
    guard (1...catalog.quotes.count).contains(quotes) else {
      throw .quoteCountOutOfRange(quotes, maximum: catalog.quotes.count)
    }
    var unique: [Preset] = []
    for preset in presets where !unique.contains(preset) { unique.append(preset) }
    var items: [BatchItem] = []
    var position = 0
    for quoteIndex in 0..<quotes {
      let picture = catalog.picture(forQuote: quoteIndex, offset: seed)
      for preset in unique {
        if shard.contains(position: position) {
          items.append(
            BatchItem(
              position: position, quoteIndex: quoteIndex, picture: picture, preset: preset, format: format,
              fileName: BatchPlan.fileName(quoteIndex: quoteIndex, preset: preset, format: format)))
        }
        position += 1
      }
    }
    self.items = items
    self.totalCount = position
    self.showsAuthor = showsAuthor
    self.alignment = alignment
    self.language = language
  }

  /// `0042-og.png`: the quote index (four digits or more), the preset, the format's extension.
  public static func fileName(quoteIndex: Int, preset: Preset, format: ImageFormat) -> String {
    let digits = String(quoteIndex)
    let padded = String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    return "\(padded)-\(preset).\(format.fileExtension)"
  }
}

/// Checks that a file holds a whole image of its format, cheaply: the signature at the start and
/// the end marker (PNG's IEND chunk, JPEG's EOI) or the container's size (WebP's RIFF header,
/// the sum of AVIF's top-level boxes).
/// Files are written whole and renamed into place, so this guards against anything else having
/// left a stub under a final name.
public enum ImageFileCheck {
  public static func isComplete(_ bytes: [UInt8], format: ImageFormat) -> Bool {
    switch format {
    case .png:
      let iend: [UInt8] = [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]
      return bytes.count > 57 && ImageDecoding.kind(of: bytes) == .png && bytes.suffix(12).elementsEqual(iend)
    case .jpeg:
      return bytes.count > 4 && ImageDecoding.kind(of: bytes) == .jpeg && bytes.suffix(2).elementsEqual([0xFF, 0xD9])
    case .webp:
      guard bytes.count > 12, bytes[0..<4].elementsEqual(Array("RIFF".utf8)),
        bytes[8..<12].elementsEqual(Array("WEBP".utf8))
      else { return false }
      let size = Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16 | Int(bytes[7]) << 24
      return size + 8 == bytes.count
    case .avif:
      return bytes.count > 12 && bytes[4..<12].elementsEqual(Array("ftypavif".utf8)) && isobmffBoxesFill(bytes)
    }
  }

  /// Whether the file is a run of whole ISO BMFF boxes (32-bit sizes, as libavif writes them
  /// for a still image) that ends exactly at the end of the file.
  private static func isobmffBoxesFill(_ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset + 8 <= bytes.count {
      let size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
      guard size >= 8 else { return false }
      offset += size
    }
    return offset == bytes.count
  }
}
