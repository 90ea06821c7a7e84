public import Foundation

/// Where the bundled catalog (`Resources/`) and fonts (`Fonts/`) are after a build.
///
/// SwiftPM copies resources only from inside a target's folder, so this target is rooted at the
/// package itself and copies the top-level `Resources/` and `Fonts/` folders as they are.
/// Looking the bundle up never traps (unlike `Bundle.module`): a missing bundle is `nil`.
public enum BundledResources {
  /// The folder holding `quotes.json`, `pictures.json` and the photos, if it can be found.
  public static var catalogDirectory: URL? { locate("Resources") }

  /// The folder holding the bundled font files, if it can be found.
  public static var fontsDirectory: URL? { locate("Fonts") }

  /// A file of the bundled `Resources/` folder (such as `openapi.yaml`), if it can be found. Unlike
  /// the catalog, it is looked up in the build's bundle when `INNERPEACE_HOME` lacks it.
  public static func resourceFile(named name: String) -> URL? {
    candidates().compactMap { $0?.appendingPathComponent("Resources/\(name)") }.first {
      FileManager.default.fileExists(atPath: $0.path)
    }
  }

  private static let bundleName = "innerpeace_InnerPeaceResources.resources"

  /// The folders that may hold `Resources/` and `Fonts/`, first choice first, each worked out
  /// only when the ones before it do not do (`Bundle.main` is not needed next to the executable).
  private static func candidates() -> LazyMapSequence<[() -> URL?], URL?> {
    let executableFolder = { () -> URL in
      URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath().deletingLastPathComponent()
    }
    let candidates: [() -> URL?] = [
      {
        guard let home = ProcessInfo.processInfo.environment["INNERPEACE_HOME"], !home.isEmpty else { return nil }
        return URL(fileURLWithPath: home)
      },
      { executableFolder().appendingPathComponent(bundleName) },
      { Bundle.main.bundleURL.appendingPathComponent(bundleName) },
      // Test runners live in a sub-bundle next to the resource bundle.
      { Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(bundleName) },
      { executableFolder().deletingLastPathComponent().appendingPathComponent("share/innerpeace") },
    ]
    return candidates.lazy.map { $0() }
  }

  private static func locate(_ folder: String) -> URL? {
    let fileManager = FileManager.default
    for case let base? in candidates() {
      let url = base.appendingPathComponent(folder, isDirectory: true)
      var isDirectory: ObjCBool = false
      if fileManager.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
        return url
      }
    }
    return nil
  }
}
