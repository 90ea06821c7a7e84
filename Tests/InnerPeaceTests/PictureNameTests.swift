import Foundation
import InnerPeace
import Testing

/// Picture names are matched in Unicode NFC: a name asked for in another normalization form finds
/// the catalog's picture, under the catalog's own spelling (the file's).
@Suite struct PictureNameTests {
  static let nfc = "caf\u{E9}.jpg"
  static let nfd = "cafe\u{301}.jpg"

  @Test func aNameInNFDFindsThePictureListedInNFC() throws {
    try withTemporaryFolder("innerpeace-picture-nfc") { folder in
      try folder.writeBytes(try bundledPhotoBytes(), to: Self.nfc)
      let catalog = try Catalog(
        quotes: [Quote(text: "Be still.", author: "Psalm 46")], pictures: [Self.nfc], directory: folder)
      #expect(Array(Self.nfc.utf8) != Array(Self.nfd.utf8))
      for asked in [Self.nfc, Self.nfd] {
        let name = try catalog.pictureName(matching: asked)
        #expect(Array(name.utf8) == Array(Self.nfc.utf8), "\(asked.unicodeScalars.map(\.value)) gave \(name)")
        let url = try catalog.pictureURL(named: asked)
        #expect(FileManager.default.fileExists(atPath: url.path), "\(url.path) is not the file")
      }
      #expect(throws: InnerPeaceError.pictureUnknown(name: "cafe.jpg")) {
        try catalog.pictureName(matching: "cafe.jpg")
      }
    }
  }

  /// A card asked for with the NFD name is the card of the NFC name, and names the picture as
  /// the catalog lists it.
  @Test func aCardWithTheNFDNameIsTheNFCCard() throws {
    try withTemporaryFolder("innerpeace-picture-nfc-card") { folder in
      try folder.writeBytes(try bundledPhotoBytes(), to: Self.nfc)
      let catalog = try Catalog(
        quotes: [Quote(text: "Be still.", author: "Psalm 46")], pictures: [Self.nfc], directory: folder)
      let renderer = try CardRenderer(catalog: catalog, backgroundCacheBytes: 0)
      func card(_ name: String) throws -> RenderedCard {
        try renderer.render(
          CardRequest(preset: try Preset(parsing: "300x200"), quote: .index(0), picture: .named(name), seed: 1))
      }
      let composed = try card(Self.nfc)
      let decomposed = try card(Self.nfd)
      #expect(decomposed.bytes == composed.bytes)
      #expect(decomposed.picture.map { Array($0.utf8) } == Array(Self.nfc.utf8))
    }
  }
}
