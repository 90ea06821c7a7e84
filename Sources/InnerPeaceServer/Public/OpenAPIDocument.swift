import Foundation
import InnerPeaceResources

/// The OpenAPI 3.1 description served at `/openapi.yaml`: the resource file
/// `Resources/openapi.yaml`, read once. Tests check its paths against ``Routes/all``.
enum OpenAPIDocument {
  /// The document's text, or `nil` when the resource bundle lacks it.
  static let yaml: String? = BundledResources.resourceFile(named: "openapi.yaml").flatMap {
    try? String(contentsOf: $0, encoding: .utf8)
  }
}
