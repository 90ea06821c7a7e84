/// The OpenAPI 3.1 description served at `/openapi.yaml`. A test checks that it lists every route.
enum OpenAPIDocument {
  static let yaml = #"""
    openapi: 3.1.0
    info:
      title: innerpeace
      version: 0.1.0
    paths: {}
    """#
}
