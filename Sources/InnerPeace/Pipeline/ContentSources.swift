public import Foundation

/// Everything besides a request that decides a card's bytes: the renderer's look, the catalog's
/// quotes and photos, and the fonts. ``version()`` folds them into the content version that the
/// service's immutable URLs carry and a batch run records, so that a change to any of them
/// changes every such URL and stops a `--resume` from keeping older cards.
public struct ContentSources: Sendable {
  /// ``CardRenderer/lookVersion``.
  public let lookVersion: Int
  /// The catalog's quotes, in order (a card URL names a quote by its index).
  public let quotes: [Quote]
  /// The picture of each quote, in order (``Catalog/picture(forQuote:offset:)``): a change of
  /// the rule changes the version.
  public let quotePictures: [String]
  /// The catalog's pictures by name, with the file each is read from (its bytes count).
  public let pictureFiles: [(name: String, file: URL)]
  /// Each picture's focus, in the order of ``pictureFiles`` (given in `pictures.json` or
  /// estimated; the crop keeps it clear of the text).
  public let pictureFoci: [PictureFocus]
  /// The version of the focus estimator (``FocusEstimator``), which decides the foci not given.
  public let focusEstimatorVersion: Int
  /// The bundled font files (their bytes count, never their paths).
  public let bundledFontFiles: [URL]
  /// The font files each face a card asks for resolves to, face by face, in order of preference
  /// (their bytes count, never their paths): fontconfig's trimmed fallback list for the bundled
  /// italic and each companion face. Installed fonts that none of these lists reach are not here.
  public let fallbackFontFiles: [(face: String, files: [URL])]
  /// The hyphenation pattern files installed for the languages cards are hyphenated in, by
  /// language (their bytes count, never their paths): they decide where long words break.
  public let hyphenationFiles: [(language: String, file: URL)]

  /// The sources of a catalog drawn with the given bundled font files; the first is the one the
  /// cards prefer for the bundled family.
  public init(catalog: Catalog, bundledFontFiles: [URL] = []) {
    lookVersion = CardRenderer.lookVersion
    quotes = catalog.quotes
    quotePictures = catalog.quotes.indices.map { catalog.picture(forQuote: $0) }
    pictureFiles = catalog.pictures.map { ($0, catalog.directory.appendingPathComponent($0)) }
    pictureFoci = catalog.pictures.map { catalog.focus(ofPicture: $0) ?? PictureFocus(x: 0.5, y: 0.5) }
    focusEstimatorVersion = FocusEstimator.version
    self.bundledFontFiles = bundledFontFiles
    fallbackFontFiles =
      bundledFontFiles.first.map { bundled in
        FontSetup.fallbackFontFiles(bundledFontPath: bundled.path).map { face in
          (face.face, face.files.map { URL(fileURLWithPath: $0) })
        }
      } ?? []
    hyphenationFiles = Hyphenation.patternFiles
  }
}

extension CardRenderer {
  /// The version of the cards' look. Bump it with every change that alters a card's pixels for
  /// the same request and catalog (layout, halo, colours, encoder settings). The golden images'
  /// test fails when they change and this does not (`Tests/InnerPeaceTests/Golden/look.json`).
  public static let lookVersion = 11

  /// What, besides a request, decides this renderer's cards.
  public var contentSources: ContentSources {
    ContentSources(catalog: catalog, bundledFontFiles: [URL(fileURLWithPath: fontPath)])
  }
}
