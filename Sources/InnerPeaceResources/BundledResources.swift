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

  private static let bundleName = "innerpeace_InnerPeaceResources.resources"

  private static func locate(_ folder: String) -> URL? {
    let fileManager = FileManager.default
    var candidates: [URL] = []
    if let home = ProcessInfo.processInfo.environment["INNERPEACE_HOME"], !home.isEmpty {
      candidates.append(URL(fileURLWithPath: home))
    }
    let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath()
    let executableFolder = executable.deletingLastPathComponent()
    candidates.append(executableFolder.appendingPathComponent(bundleName))
    candidates.append(Bundle.main.bundleURL.appendingPathComponent(bundleName))
    // Test runners live in a sub-bundle next to the resource bundle.
    candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(bundleName))
    candidates.append(executableFolder.deletingLastPathComponent().appendingPathComponent("share/innerpeace"))
    for base in candidates {
      let url = base.appendingPathComponent(folder, isDirectory: true)
      var isDirectory: ObjCBool = false
      if fileManager.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
        return url
      }
    }
    return nil
  }
}
