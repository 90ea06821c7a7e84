internal import CInnerPeace
import Foundation

/// The bundled fonts, registered with fontconfig before any Pango call, and made the ones Pango
/// really uses.
///
/// Registration is the core's only process-wide state: fontconfig's configuration is itself
/// global. Each fonts folder is added once. Pango then gets the bundled *file*, not merely a font
/// of the same family that the machine may have installed: the file is added to the fontconfig
/// pattern of every font Pango asks for in that family (file is fontconfig's strongest match).
enum FontSetup {
  /// The family the card asks Pango for.
  static let family = "EB Garamond"
  /// The bundled file that must back ``family``.
  static let fileName = "EBGaramond12-Italic.otf"

  /// Folders already added to fontconfig.
  private static let registeredFolders = Locked<Set<String>>([])

  /// Registers a fonts folder (once per process and folder) and returns the bundled font's path.
  /// - Throws: ``InnerPeaceError/fontsUnavailable(reason:)`` when the folder or file is missing, or
  ///   fontconfig refuses the folder. A failure is not remembered: a later call tries again.
  @discardableResult
  static func register(fontsDirectory: URL?) throws(InnerPeaceError) -> String {
    guard let fontsDirectory else {
      throw .fontsUnavailable(reason: "the bundled Fonts folder was not found (set INNERPEACE_HOME)")
    }
    let folder = fontsDirectory.standardizedFileURL.path
    let path = fontsDirectory.appendingPathComponent(fileName).standardizedFileURL.path
    guard FileManager.default.fileExists(atPath: path) else {
      throw .fontsUnavailable(reason: "\(path) is missing")
    }
    // Adding a folder grows the font set that every `FcFontSort` (Pango's font loading) reads,
    // so it holds ``FontLock`` as they do. The set is then fixed: fontconfig's rescan (every 30 s
    // by default) could swap in a configuration without the bundled fonts and change the fonts a
    // card resolves to under a content version computed at start.
    let added = FontLock.withLock {
      registeredFolders.withLock { folders -> Bool in
        if folders.contains(folder) { return true }
        guard FcInit() != 0, FcConfigAppFontAddDir(nil, folder) != 0 else { return false }
        _ = FcConfigSetRescanInterval(nil, 0)
        folders.insert(folder)
        return true
      }
    }
    guard added else { throw .fontsUnavailable(reason: "fontconfig could not add \(folder)") }
    return path
  }

  /// The calling thread's Pango font map, set up to prefer the font file at `bundledFontPath`.
  ///
  /// Pango keeps one default font map per thread. The preferred file is kept on the font map
  /// object itself, so there is no thread-local state of ours; when a renderer with another
  /// fonts folder uses the thread, the font map's caches are cleared.
  static func threadFontMap(bundledFontPath: String) -> UnsafeMutablePointer<PangoFontMap> {
    let fontMap = pango_cairo_font_map_get_default()!
    let object = UnsafeMutableRawPointer(fontMap).assumingMemoryBound(to: GObject.self)
    let fcFontMap = OpaquePointer(fontMap)
    if g_object_get_data(object, hookKey) == nil {
      pango_fc_font_map_set_default_substitute(fcFontMap, preferBundledFile, UnsafeMutableRawPointer(object), nil)
      g_object_set_data(object, hookKey, UnsafeMutableRawPointer(bitPattern: 1))
    }
    let current = g_object_get_data(object, pathKey)
    if current == nil || String(cString: current!.assumingMemoryBound(to: CChar.self)) != bundledFontPath {
      g_object_set_data_full(object, pathKey, strdup(bundledFontPath), freeString)
      if current != nil { FontLock.withLock { pango_fc_font_map_cache_clear(fcFontMap) } }
    }
    return fontMap
  }

  /// Companion families whose Bold file Debian ships with the regular weight (fontconfig gives
  /// both files weight 80, and picks the Bold one): they are asked for by style name as well.
  static let regularStyleFamilies: Set<String> = ["Noto Nastaliq Urdu", "Noto Serif Myanmar"]

  static let hookKey = "innerpeace-substitute-installed"
  static let pathKey = "innerpeace-font-path"
}

/// Adds the preferred file to patterns that ask for the bundled family, so fontconfig ranks that
/// exact file first. `data` is the font map, which holds the file's path.
private func preferBundledFile(pattern: OpaquePointer?, data: gpointer?) {
  guard let pattern, let data else { return }
  let object = data.assumingMemoryBound(to: GObject.self)
  guard let path = g_object_get_data(object, FontSetup.pathKey) else { return }
  var family: UnsafeMutablePointer<FcChar8>?
  guard FcPatternGetString(pattern, FC_FAMILY, 0, &family) == FcResultMatch, let family else { return }
  let name = String(cString: family)
  if FontSetup.regularStyleFamilies.contains(name) {
    FcPatternDel(pattern, FC_STYLE)
    _ = "Regular".withCString {
      FcPatternAddString(pattern, FC_STYLE, UnsafeRawPointer($0).assumingMemoryBound(to: FcChar8.self))
    }
  }
  guard name == FontSetup.family else { return }
  FcPatternDel(pattern, FC_FILE)
  FcPatternAddString(pattern, FC_FILE, path.assumingMemoryBound(to: FcChar8.self))
}

private func freeString(_ data: gpointer?) { free(data) }

extension FontSetup {
  /// The faces a card asks fontconfig for: the bundled italic (its family, with `bundledFontPath`
  /// preferred as ``threadFontMap(bundledFontPath:)`` makes it) and every companion face of
  /// ``TextAttributes/Face`` (family, slant, language).
  static func cardFaces(bundledFontPath: String) -> [CardFace] {
    let companions: [TextAttributes.Face] = [
      .cjkSC, .cjkJP, .cjkKR, .arabic, .hebrew, .devanagari, .thai, .serifItalic, .serifItalicCapital, .serifUpright,
      .urdu, .bengali, .gurmukhi, .gujarati, .tamil, .telugu, .kannada, .malayalam, .sinhala, .lao, .tibetan,
      .myanmar, .georgian, .armenian, .ethiopic, .khmer,
    ]
    var faces = [CardFace(name: "bundled", family: family, italic: true, language: nil, file: bundledFontPath)]
    for face in companions {
      faces.append(
        CardFace(
          name: "\(face)", family: face.family ?? family, italic: !face.isUpright, language: face.language, file: nil))
    }
    return faces
  }

  /// A face as fontconfig is asked for it.
  struct CardFace {
    let name: String
    let family: String
    let italic: Bool
    let language: String?
    /// The file preferred for the family (the bundled one), if any.
    let file: String?
  }

  /// The font files each face a card asks for resolves to, in fontconfig's order of preference:
  /// its sorted fallback list, trimmed (a font that adds no character to those before it is left
  /// out: Pango, which takes the first font covering a character, never reaches it). These, and
  /// only these, of the installed fonts can draw a card; a font installed for nothing these lists
  /// reach does not appear.
  static func fallbackFontFiles(bundledFontPath: String) -> [(face: String, files: [String])] {
    guard FcInit() != 0 else { return [] }
    return FontLock.withLock {
      cardFaces(bundledFontPath: bundledFontPath).map { face in
        guard let pattern = FcPatternCreate() else { return (face.name, []) }
        defer { FcPatternDestroy(pattern) }
        func add(_ object: String, _ value: String) {
          _ = value.withCString { text in
            FcPatternAddString(pattern, object, UnsafeRawPointer(text).assumingMemoryBound(to: FcChar8.self))
          }
        }
        add(FC_FAMILY, face.family)
        FcPatternAddInteger(pattern, FC_SLANT, face.italic ? Int32(FC_SLANT_ITALIC) : Int32(FC_SLANT_ROMAN))
        if let language = face.language { add(FC_LANG, language) }
        if let file = face.file { add(FC_FILE, file) }
        FcConfigSubstitute(nil, pattern, FcMatchPattern)
        FcDefaultSubstitute(pattern)
        var result = FcResultMatch
        guard let sorted = FcFontSort(nil, pattern, 1, nil, &result) else { return (face.name, []) }
        defer { FcFontSetDestroy(sorted) }
        var files: [String] = []
        for index in 0..<Int(sorted.pointee.nfont) {
          guard let font = sorted.pointee.fonts[index] else { continue }
          var file: UnsafeMutablePointer<FcChar8>?
          guard FcPatternGetString(font, FC_FILE, 0, &file) == FcResultMatch, let file else { continue }
          let path = String(cString: file)
          if files.last != path { files.append(path) }
        }
        return (face.name, files)
      }
    }
  }
}
