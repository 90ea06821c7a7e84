import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import InnerPeace
import NIOCore

/// What every page shares: its Content-Security-Policy and the favicon's bytes.
enum PageAssets {
  /// Scripts and styles only by hash: nothing injected into a page could run. Images come from
  /// this origin, the public one (the og card's), and the script's decoded blobs.
  static func contentSecurityPolicy(publicURL: String?) -> String {
    "default-src 'none'; img-src 'self'\(publicURL.map { " " + $0 } ?? "") blob: data:; connect-src 'self';"
      + " style-src '\(styleHash)'; script-src '\(scriptHash)'; base-uri 'none'; form-action 'none';"
      + " frame-ancestors 'none'"
  }

  static let styleHash = hash(WebPage.style)
  static let scriptHash = hash(WebPage.script)

  /// A CSP source: `sha256-` and the base64 SHA-256 of the text.
  static func hash(_ text: String) -> String {
    "sha256-" + Data(SHA256.hash(data: Array(text.utf8))).base64EncodedString()
  }

  static let faviconSVG = """
    <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
    <rect width="32" height="32" rx="6" fill="#1f3a33"/>
    <text x="16" y="29" font-family="Georgia,serif" font-style="italic" font-size="30" fill="#fff" \
    text-anchor="middle">\u{201D}</text>
    </svg>
    """

  static let faviconICO = Data(
    base64Encoded:
      "AAABAAEAICAAAAEAIAALAQAAFgAAAIlQTkcNChoKAAAADUlIRFIAAAAgAAAAIAgGAAAAc3p69AAAANJJREFUeNrtl9sOgkAMRPshqIjw7oWrouL/f1StmhhZtqwrwrwwyUm6m0lnXktkKEi3PCakaezg3iJTh3dKBJl8AHiGL7IdI6FFLgMQfIFlsWckcwFalQd2YWqo7xPyDdeWf+vrFqhkUHDJ12eDwiplDZd8fTYoPMqg4Fzs6bOBL7A+ZdyHpl99Js4CtuVDfV4Fxgx/Fahl6KG19A8+E4rqnDVMDfXZoOgsAxB8gc2lYCRzAYqvJSPBF3gobuQB4H0ZJU3FCFr3YXKTzwlRr+Spg+/77jl2raRa0QAAAABJRU5ErkJggg=="
  )!
}

extension HTTPField.Name {
  static let contentSecurityPolicy = HTTPField.Name("Content-Security-Policy")!
  static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
  static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}
