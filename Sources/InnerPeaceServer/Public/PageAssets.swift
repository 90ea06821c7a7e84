import Crypto
import Foundation
import InnerPeaceResources

/// The web page's files, `Resources/page/` of the resource bundle, read once: the HTML template
/// (`index.html`), its style sheet (`page.css`) and script (`page.js`), both inlined into the page,
/// and the icons. The Content-Security-Policy allows exactly the style sheet and script read here,
/// by their SHA-256.
struct PageAssets: Sendable {
  /// A file of the page that cannot be used.
  struct LoadError: Error, CustomStringConvertible {
    /// The file's name in the page's folder.
    let file: String
    /// What is wrong with it.
    let reason: String

    var description: String { "the web page's file \(file) cannot be used: \(reason)" }
  }

  /// The page's HTML, its slots still to fill in.
  let template: PageTemplate<WebPage.Slot>
  /// The style sheet, as the page inlines it.
  let style: String
  /// The script, as the page inlines it.
  let script: String
  /// `/favicon.svg`.
  let faviconSVG: Data
  /// `/favicon.ico`: a 32x32 PNG inside an ICO.
  let faviconICO: Data
  /// The CSP source allowing the style sheet: `sha256-` and its base64 SHA-256.
  let styleHash: String
  /// The CSP source allowing the script.
  let scriptHash: String

  /// The page's folder of the resource bundle (`INNERPEACE_HOME`, next to the binary, or the
  /// build's), read once on first use; a missing or bad file is an error every use repeats.
  static let bundledResult: Result<PageAssets, LoadError> = {
    guard let folder = BundledResources.resourceFile(named: "page") else {
      return .failure(LoadError(file: "page/", reason: "not found in the resource bundle"))
    }
    return Result { () throws(LoadError) in try PageAssets(folder: folder) }
  }()

  /// The bundled page; the service reads it once at start-up, so a broken install fails there.
  static func bundled() throws(LoadError) -> PageAssets { try bundledResult.get() }

  /// Reads the page from `folder`.
  init(folder: URL) throws(LoadError) {
    func read(_ name: String) throws(LoadError) -> Data {
      do {
        return try Data(contentsOf: folder.appendingPathComponent(name))
      } catch {
        throw LoadError(file: name, reason: "unreadable (\((error as NSError).localizedDescription))")
      }
    }
    func text(_ name: String) throws(LoadError) -> String {
      guard let text = String(validating: try read(name), as: UTF8.self) else {
        throw LoadError(file: name, reason: "not UTF-8")
      }
      return text
    }
    let html = try text("index.html")
    do {
      template = try PageTemplate(html)
    } catch {
      throw LoadError(file: "index.html", reason: error.description)
    }
    style = try text("page.css")
    script = try text("page.js")
    // Inlined text must not end its own element early.
    if style.range(of: "</style", options: .caseInsensitive) != nil {
      throw LoadError(file: "page.css", reason: "it holds </style")
    }
    if script.range(of: "</script", options: .caseInsensitive) != nil {
      throw LoadError(file: "page.js", reason: "it holds </script")
    }
    faviconSVG = try read("favicon.svg")
    faviconICO = try read("favicon.ico")
    styleHash = Self.hash(style)
    scriptHash = Self.hash(script)
  }

  /// Scripts and styles only by hash: nothing injected into a page could run. Images come from
  /// this origin, the public one (the og card's), and the script's decoded blobs.
  func contentSecurityPolicy(publicURL: String?) -> String {
    "default-src 'none'; img-src 'self'\(publicURL.map { " " + $0 } ?? "") blob: data:; connect-src 'self';"
      + " style-src '\(styleHash)'; script-src '\(scriptHash)'; base-uri 'none'; form-action 'none';"
      + " frame-ancestors 'none'"
  }

  /// A CSP source: `sha256-` and the base64 SHA-256 of the text.
  static func hash(_ text: String) -> String {
    "sha256-" + Data(SHA256.hash(data: Array(text.utf8))).base64EncodedString()
  }
}
