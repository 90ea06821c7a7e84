internal import CInnerPeace
import Foundation
import Synchronization

/// The bundled fonts, registered once with fontconfig before any Pango call.
///
/// This is the core's only process-wide state: fontconfig's configuration is itself global, so
/// registering the bundled files twice would only waste time. Registration also makes Pango pick
/// the bundled *file* (not merely a font of the same family that the machine may have installed)
/// by adding the file to the fontconfig pattern of every font Pango asks for in that family.
enum FontSetup {
  /// The family the card asks Pango for.
  static let family = "EB Garamond"
  /// The bundled file that must back ``family``.
  static let fileName = "EBGaramond12-Italic.otf"

  private static let state = Mutex<Result<String, InnerPeaceError>?>(nil)

  /// Registers the bundled fonts (once per process) and returns the bundled font's path.
  /// - Throws: ``InnerPeaceError/fontsUnavailable(reason:)`` when the folder or file is missing.
  @discardableResult
  static func register(fontsDirectory: URL?) throws(InnerPeaceError) -> String {
    let result = state.withLock { state -> Result<String, InnerPeaceError> in
      if let state { return state }
      let outcome = registerNow(fontsDirectory: fontsDirectory)
      state = outcome
      return outcome
    }
    return try result.get()
  }

  private static func registerNow(fontsDirectory: URL?) -> Result<String, InnerPeaceError> {
    guard let fontsDirectory else {
      return .failure(.fontsUnavailable(reason: "the bundled Fonts folder was not found (set INNERPEACE_HOME)"))
    }
    let path = fontsDirectory.appendingPathComponent(fileName).path
    guard FileManager.default.fileExists(atPath: path) else {
      return .failure(.fontsUnavailable(reason: "\(path) is missing"))
    }
    guard FcInit() != 0, FcConfigAppFontAddDir(nil, fontsDirectory.path) != 0 else {
      return .failure(.fontsUnavailable(reason: "fontconfig could not add \(fontsDirectory.path)"))
    }
    return .success(path)
  }

  /// The calling thread's Pango font map, set up (once per thread) to prefer the bundled file.
  ///
  /// Pango keeps one default font map per thread; the set-up is remembered on the font map
  /// object itself, so there is no thread-local state of ours.
  static func threadFontMap(bundledFontPath: String) -> UnsafeMutablePointer<PangoFontMap> {
    let fontMap = pango_cairo_font_map_get_default()!
    let object = UnsafeMutableRawPointer(fontMap).assumingMemoryBound(to: GObject.self)
    if g_object_get_data(object, markerKey) == nil {
      let data = strdup(bundledFontPath)
      let fcFontMap = OpaquePointer(fontMap)
      pango_fc_font_map_set_default_substitute(fcFontMap, preferBundledFile, data, freeString)
      g_object_set_data(object, markerKey, UnsafeMutableRawPointer(bitPattern: 1))
    }
    return fontMap
  }

  private static let markerKey = "innerpeace-font-map-ready"
}

/// Adds the bundled file to patterns that ask for the bundled family, so fontconfig ranks that
/// exact file first (file is fontconfig's highest-priority match element).
private func preferBundledFile(pattern: OpaquePointer?, data: gpointer?) {
  guard let pattern, let data else { return }
  var family: UnsafeMutablePointer<FcChar8>?
  guard FcPatternGetString(pattern, FC_FAMILY, 0, &family) == FcResultMatch, let family else { return }
  guard String(cString: family) == FontSetup.family else { return }
  FcPatternDel(pattern, FC_FILE)
  FcPatternAddString(pattern, FC_FILE, data.assumingMemoryBound(to: FcChar8.self))
}

private func freeString(_ data: gpointer?) { free(data) }
