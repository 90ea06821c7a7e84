import HTTPTypes
import InnerPeace
import InnerPeaceServer
import Testing

/// The one mapping of the renderer's errors to HTTP: each case gets the status the README and
/// the OpenAPI document promise, the parameter at fault where a query parameter is, and a public
/// message that never carries a file name, a path or the renderer's own reason.
@Suite struct ServiceErrorTests {
  struct Mapping: Sendable, CustomTestStringConvertible {
    let error: InnerPeaceError
    let status: HTTPResponse.Status
    let parameter: String?
    var testDescription: String { "\(error)" }
  }

  static let mappings: [Mapping] = [
    // A request for something the catalog lacks: 404.
    Mapping(error: .quoteIndexOutOfRange(index: 9, count: 3), status: .notFound, parameter: "quote"),
    Mapping(error: .pictureUnknown(name: "nope.jpg"), status: .notFound, parameter: "picture"),
    Mapping(error: .pictureNameInvalid(name: "../x"), status: .notFound, parameter: "picture"),
    // A bad value in the query: 400 naming it.
    Mapping(error: .textInvalid(reason: "empty"), status: .badRequest, parameter: "text"),
    Mapping(error: .authorInvalid(reason: "long"), status: .badRequest, parameter: "author"),
    Mapping(error: .presetUnknown("huge"), status: .badRequest, parameter: "preset"),
    Mapping(error: .sizeInvalid(reason: "small"), status: .badRequest, parameter: "w"),
    Mapping(error: .formatUnknown("gif"), status: .badRequest, parameter: "format"),
    Mapping(error: .transparencyUnsupported(format: .jpeg), status: .badRequest, parameter: "format"),
    // A photo replaced on disk: 503 until the catalog is loaded again.
    Mapping(error: .pictureChanged(name: "secret-name.jpg"), status: .serviceUnavailable, parameter: nil),
    // The service's own faults: 500 with a public message.
    Mapping(
      error: .catalogUnreadable(file: "/srv/secret/quotes.json", reason: "EACCES"), status: .internalServerError,
      parameter: nil),
    Mapping(
      error: .catalogMalformed(file: "/srv/secret/q.json", line: 1, column: 2, reason: "bad"),
      status: .internalServerError, parameter: nil),
    Mapping(
      error: .catalogInvalid(file: "/srv/secret/p.json", reason: "bad"), status: .internalServerError, parameter: nil),
    Mapping(error: .pictureMissing(name: "secret-name.jpg"), status: .internalServerError, parameter: nil),
    Mapping(
      error: .pictureUndecodable(name: "secret-name.jpg", reason: "EOF"), status: .internalServerError, parameter: nil),
    Mapping(error: .decodingFailed(reason: "libjpeg: EOF"), status: .internalServerError, parameter: nil),
    Mapping(error: .fontsUnavailable(reason: "/usr/share/fonts"), status: .internalServerError, parameter: nil),
    Mapping(error: .renderFailed(reason: "cairo: NO_MEMORY"), status: .internalServerError, parameter: nil),
    Mapping(error: .encodingFailed(format: .webp, reason: "libwebp: 3"), status: .internalServerError, parameter: nil),
  ]

  @Test(arguments: mappings)
  func eachErrorHasItsDocumentedStatus(_ mapping: Mapping) {
    let response = ServiceError.from(mapping.error)
    #expect(response.status == mapping.status)
    #expect(response.parameter == mapping.parameter)
    #expect(!response.message.isEmpty && !response.message.contains("\n"), "\(response.message)")
    if mapping.status == .internalServerError || mapping.status == .serviceUnavailable {
      for secret in ["/srv", "/usr", "secret", "EACCES", "EOF", "cairo", "libwebp", "libjpeg"] {
        #expect(!response.message.contains(secret), "a public message carries '\(secret)': \(response.message)")
      }
    }
  }
}
