import Foundation
import HTTPTypes
public import Hummingbird
package import InnerPeace

/// An error with an HTTP status and a public message, rendered as
/// `{"error": {"parameter": ..., "message": ...}}`. Messages never carry paths or internals.
public struct ServiceError: HTTPResponseError, Sendable {
  public let status: HTTPResponse.Status
  public let parameter: String?
  public let message: String
  public var headers: HTTPFields = [:]

  public init(_ status: HTTPResponse.Status, parameter: String? = nil, _ message: String) {
    self.status = status
    self.parameter = parameter
    self.message = message
  }

  static func badParameter(_ name: String, _ message: String) -> ServiceError {
    ServiceError(.badRequest, parameter: name, message)
  }

  public func response(from request: Request, context: some RequestContext) throws -> Response {
    let data = try ServiceJSON.encode(ErrorBody(error: .init(message: message, parameter: parameter)))
    var fields = headers
    fields[.contentType] = "application/json; charset=utf-8"
    fields[.cacheControl] = "no-store"
    return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
  }

  /// The one place renderer errors become HTTP errors. `parameter` names the query parameter
  /// that carried the bad value, where there is one.
  package static func from(_ error: InnerPeaceError) -> ServiceError {
    switch error {
    case .quoteIndexOutOfRange(let index, let count):
      return ServiceError(
        .notFound, parameter: "quote", "no quote \(index): the catalog has \(count) (0...\(count - 1))")
    case .pictureUnknown(let name):
      return ServiceError(.notFound, parameter: "picture", "no picture named '\(name)'")
    case .pictureNameInvalid:
      return ServiceError(
        .notFound, parameter: "picture", "no such picture: a picture is named by its catalog file name")
    case .textInvalid(let reason):
      return .badParameter("text", "invalid text: \(reason)")
    case .authorInvalid(let reason):
      return .badParameter("author", "invalid author: \(reason)")
    case .presetUnknown:
      return .badParameter("preset", error.description)
    case .sizeInvalid(let reason):
      return .badParameter("w", "invalid size: \(reason)")
    case .formatUnknown:
      return .badParameter("format", error.description)
    case .transparencyUnsupported:
      return .badParameter("format", error.description)
    case .pictureChanged:
      // Until the catalog is loaded again (a restart): the service sets Retry-After.
      return ServiceError(.serviceUnavailable, "this card's picture is being replaced; try again later")
    case .catalogUnreadable, .catalogMalformed, .catalogInvalid, .pictureMissing, .pictureUndecodable,
      .fontsUnavailable, .renderFailed, .decodingFailed, .encodingFailed:
      return ServiceError(.internalServerError, "the card could not be rendered")
    }
  }
}

/// The body of every error: `{"error": {"message": ..., "parameter": ...}}`.
struct ErrorBody: Codable, Sendable {
  struct Detail: Codable, Sendable {
    let message: String
    /// The query parameter at fault, when one is.
    let parameter: String?
  }
  let error: Detail
}

extension ServiceError {
  /// The refusal of a URL whose signature does not hold (``SigningKeys/Verdict``); `nil` for a
  /// valid one.
  init?(_ verdict: SigningKeys.Verdict) {
    switch verdict {
    case .valid: return nil
    case .missing: self.init(.forbidden, parameter: "signature", "this URL must be signed: signature is missing")
    case .mismatch: self.init(.forbidden, parameter: "signature", "the signature does not match this URL")
    case .keyIDInvalid:
      self = .badParameter(
        "kid", "kid must be given once, 1 to \(URLSigner.maximumKeyIDLength) characters of A-Z a-z 0-9 . _ -")
    case .keyUnknown(let id): self.init(.forbidden, parameter: "kid", "no signing key has the ID '\(id)'")
    case .expiryInvalid:
      self = .badParameter(
        "expires", "expires must be given once, a Unix time in seconds from 0 to \(SigningKeys.latestExpiry)")
    case .expired(let seconds):
      self.init(.forbidden, parameter: "expires", "signature expired at \(SigningKeys.timestamp(seconds))")
    }
  }
}
