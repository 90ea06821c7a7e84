import Foundation
import InnerPeace
import Testing

/// `BatchPlan`, `Shard` and `ImageFileCheck`: what a batch run makes, how shards split it, and how
/// a finished file is recognised.
@Suite("Batch plan, shards and file checks")
struct BatchPlanTests {
  static var catalog: Catalog { Fixtures.catalog }

  static func preset(_ text: String) throws -> Preset { try Preset(parsing: text) }

  // MARK: File names

  @Test func fileNamesAreStableAndReadable() throws {
    #expect(BatchPlan.fileName(quoteIndex: 42, preset: .og, format: .png) == "0042-og.png")
    #expect(
      BatchPlan.fileName(quoteIndex: 7, preset: try Self.preset("1600x900"), format: .webp) == "0007-1600x900.webp")
    #expect(BatchPlan.fileName(quoteIndex: 0, preset: .story, format: .jpeg) == "0000-story.jpg")
    #expect(BatchPlan.fileName(quoteIndex: 999, preset: .square, format: .png) == "0999-square.png")
    #expect(BatchPlan.fileName(quoteIndex: 12345, preset: .classic, format: .png) == "12345-classic.png")
  }

  @Test func planItemsCarryTheirFileNamesInQuoteMajorOrder() throws {
    let custom = try Self.preset("1600x900")
    let plan = try BatchPlan(catalog: Self.catalog, presets: [.og, custom], quoteCount: 3, format: .webp, seed: 5)
    #expect(plan.totalCount == 6)
    #expect(
      plan.items.map(\.fileName) == [
        "0000-og.webp", "0000-1600x900.webp", "0001-og.webp", "0001-1600x900.webp", "0002-og.webp",
        "0002-1600x900.webp",
      ])
    #expect(plan.items.map(\.position) == Array(0..<6))
    #expect(plan.items.map(\.quoteIndex) == [0, 0, 1, 1, 2, 2])
    #expect(plan.items.allSatisfy { $0.format == .webp })
    // Both presets of a quote share its picture.
    for pair in stride(from: 0, to: 6, by: 2) {
      #expect(plan.items[pair].picture == plan.items[pair + 1].picture)
      #expect(Self.catalog.pictures.contains(plan.items[pair].picture))
    }
  }

  /// One rule for the picture of quote N (``Catalog/picture(forQuote:offset:)``): the pictures in
  /// turn, as the service's card URLs, pages, `/quotes` and feeds show each quote. Seed 0 gives
  /// the service's picture; seed S moves every quote S places along the list.
  @Test func eachQuoteIsOnThePictureTheServiceShowsItOn() throws {
    let catalog = Self.catalog
    let count = catalog.pictures.count
    let plan = try BatchPlan(catalog: catalog, presets: [.og])
    for item in plan.items {
      #expect(item.picture == catalog.pictures[item.quoteIndex % count], "quote \(item.quoteIndex)")
      #expect(item.picture == catalog.picture(forQuote: item.quoteIndex))
    }
    for seed: UInt64 in [1, 3, UInt64(count), .max] {
      let shifted = try BatchPlan(catalog: catalog, presets: [.og], seed: seed)
      for item in shifted.items {
        let expected = catalog.pictures[(item.quoteIndex + Int(seed % UInt64(count))) % count]
        #expect(item.picture == expected, "seed \(seed), quote \(item.quoteIndex)")
      }
    }
    // The quote of the day is on its quote's picture too.
    for date in ["2026-11-23", "2026-11-24", "2027-02-28"] {
      let day = catalog.quoteOfTheDay(date: date)
      #expect(day.picture == catalog.picture(forQuote: day.quoteIndex), "\(date)")
    }
  }

  @Test func presetsAreDeduplicatedKeepingTheFirstOrder() throws {
    let custom = try Self.preset("1600x900")
    let again = try Self.preset("1600x900")
    let plan = try BatchPlan(
      catalog: Self.catalog, presets: [.square, .og, .square, custom, .og, again], quoteCount: 2)
    #expect(plan.totalCount == 6, "three distinct presets for two quotes")
    #expect(plan.items.map(\.preset) == [.square, .og, custom, .square, .og, custom])
    #expect(Set(plan.items.map(\.fileName)).count == plan.items.count, "file names repeat")
  }

  @Test func theWholeCatalogByDefault() throws {
    let plan = try BatchPlan(catalog: Self.catalog, presets: [.og])
    #expect(plan.totalCount == Self.catalog.quotes.count)
    #expect(plan.items.map(\.quoteIndex) == Array(Self.catalog.quotes.indices))
    #expect(plan.items.allSatisfy { $0.format == .png })
  }

  @Test func countBounds() throws {
    let size = Self.catalog.quotes.count
    for bad in [0, -1, size + 1, Int.max] {
      let error = thrownError(BatchPlanError.self) {
        try BatchPlan(catalog: Self.catalog, presets: [.og], quoteCount: bad)
      }
      #expect(error == .quoteCountOutOfRange(bad, maximum: size), "count \(bad): \(String(describing: error))")
      // Neutral words: the core names no command-line option.
      let reason = error?.description ?? ""
      #expect(reason.hasPrefix("count \(bad) ") && !reason.contains("--"), "\(reason)")
    }
    #expect(try BatchPlan(catalog: Self.catalog, presets: [.og], quoteCount: 1).totalCount == 1)
    #expect(try BatchPlan(catalog: Self.catalog, presets: [.og], quoteCount: size).totalCount == size)
    let empty = thrownError(BatchPlanError.self) { try BatchPlan(catalog: Self.catalog, presets: [], quoteCount: 1) }
    #expect(empty == .presetListEmpty, "no presets: \(String(describing: empty))")
  }

  @Test func theSameSeedGivesTheSamePlan() throws {
    for seed: UInt64 in [0, 1, 42, .max] {
      let a = try BatchPlan(catalog: Self.catalog, presets: [.og, .square], seed: seed)
      let b = try BatchPlan(catalog: Self.catalog, presets: [.og, .square], seed: seed)
      #expect(a.items == b.items, "seed \(seed)")
      #expect(a.totalCount == b.totalCount)
    }
  }

  @Test func differentSeedsChangeThePictures() throws {
    let pictures = try [1, 2, 3].map { seed in
      try BatchPlan(catalog: Self.catalog, presets: [.og], seed: UInt64(seed)).items.map(\.picture)
    }
    #expect(pictures[0] != pictures[1])
    #expect(pictures[1] != pictures[2])
    #expect(pictures[0] != pictures[2])
    // Over the whole catalog a seed uses more than one picture.
    #expect(Set(pictures[0]).count > 1)
    // The seed changes pictures only: the quotes and names stay.
    let a = try BatchPlan(catalog: Self.catalog, presets: [.og], seed: 1)
    let b = try BatchPlan(catalog: Self.catalog, presets: [.og], seed: 2)
    #expect(a.items.map(\.fileName) == b.items.map(\.fileName))
  }

  // MARK: Shards

  @Test(arguments: [1, 2, 3, 4, 5])
  func shardsPartitionTheRunExactly(count: Int) throws {
    let custom = try Self.preset("320x200")
    let plans: [(presets: [Preset], quotes: Int?)] = [
      ([.og], nil), ([.og], 1), ([.og], 2), ([.og, .square, custom], 7), ([.story, .og], 4), ([custom], 5),
    ]
    for (presets, quotes) in plans {
      let full = try BatchPlan(catalog: Self.catalog, presets: presets, quoteCount: quotes, seed: 9)
      var seen: [Int: Int] = [:]
      var sizes: [Int] = []
      for index in 1...count {
        let shard = try Shard(parsing: "\(index)/\(count)")
        let part = try BatchPlan(catalog: Self.catalog, presets: presets, quoteCount: quotes, seed: 9, shard: shard)
        #expect(part.totalCount == full.totalCount, "a shard knows the whole run's size")
        sizes.append(part.items.count)
        for item in part.items {
          if let other = seen[item.position] {
            Issue.record("position \(item.position) is in shards \(other) and \(index) of \(count)")
          }
          seen[item.position] = index
          // The shard's item is the full run's item at that position, exactly.
          #expect(full.items[item.position] == item)
        }
        #expect(part.items.map(\.position) == part.items.map(\.position).sorted())
      }
      #expect(
        Set(seen.keys) == Set(0..<full.totalCount),
        "\(count) shards of \(presets) x \(String(describing: quotes)) miss positions")
      #expect(seen.count == full.totalCount)
      #expect((sizes.max() ?? 0) - (sizes.min() ?? 0) <= 1, "shards are uneven: \(sizes)")
    }
  }

  @Test func shardParsing() throws {
    let shard = try Shard(parsing: "2/8")
    #expect(shard.index == 2 && shard.count == 8)
    #expect(shard.description == "2/8")
    #expect(try Shard(parsing: "1/1") == Shard.all)
    #expect(try Shard(parsing: "3/3").index == 3)
    for bad in ["0/3", "4/3", "a/b", "3", "", "/", "1/", "/3", "1/0", "-1/3", "1/2/3", "1/100001", "1 /2", "2/-3"] {
      let error = thrownError(BatchPlanError.self) { try Shard(parsing: bad) }
      switch error {
      case .shardMalformed(let text): #expect(text == bad)
      case .shardOutOfRange(let index, let count): #expect("\(index)/\(count)" == bad, "'\(bad)'")
      default: Issue.record("'\(bad)': expected a shard error, got \(String(describing: error))")
      }
      let reason = error?.description ?? ""
      #expect(reason.hasPrefix("shard ") && !reason.contains("--"), "'\(bad)': \(reason)")
    }
  }

  @Test func shardMembershipIsRoundRobin() throws {
    let shard = try Shard(parsing: "2/3")
    #expect((0..<9).filter { shard.contains(position: $0) } == [1, 4, 7])
    #expect((0..<5).allSatisfy { Shard.all.contains(position: $0) })
  }

  // MARK: ImageFileCheck

  static let smallCard: Preset = .custom(try! CanvasSize(width: 240, height: 200))

  @Test(arguments: ImageFormat.allCases)
  func imageFileCheckAcceptsWholeFilesAndRejectsTruncatedOnes(format: ImageFormat) throws {
    let card = try Fixtures.renderer.render(
      CardRequest(preset: Self.smallCard, quote: .index(1), picture: .named("aqua.jpg"), seed: 1, format: format))
    let bytes = card.bytes
    #expect(ImageFileCheck.isComplete(bytes, format: format), "a freshly rendered \(format) is not accepted")
    #expect(!ImageFileCheck.isComplete(Array(bytes.dropLast()), format: format), "truncated by one byte")
    #expect(!ImageFileCheck.isComplete(Array(bytes.prefix(bytes.count / 2)), format: format), "half a file")
    #expect(!ImageFileCheck.isComplete(Array(bytes.prefix(16)), format: format), "a header only")
    #expect(!ImageFileCheck.isComplete([], format: format), "empty data")
    #expect(!ImageFileCheck.isComplete(bytes + [0], format: format), "a stray byte after the end")
    for other in ImageFormat.allCases where other != format {
      #expect(!ImageFileCheck.isComplete(bytes, format: other), "\(format) bytes accepted as \(other)")
    }
  }

  @Test func imageFileCheckRejectsJunk() {
    let junk = [UInt8](repeating: 0xAB, count: 4096)
    for format in ImageFormat.allCases {
      #expect(!ImageFileCheck.isComplete(junk, format: format))
    }
    // Magic numbers alone are not enough.
    #expect(!ImageFileCheck.isComplete(pngSignature, format: .png))
    #expect(!ImageFileCheck.isComplete([0xFF, 0xD8, 0xFF, 0xD9], format: .jpeg))
    #expect(!ImageFileCheck.isComplete(Array("RIFF\u{4}\0\0\0WEBP".utf8), format: .webp))
    #expect(!ImageFileCheck.isComplete(Array("\0\0\0\u{C}ftypavif".utf8), format: .avif))
  }
}
