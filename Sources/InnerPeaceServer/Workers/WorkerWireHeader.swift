import Foundation
public import InnerPeace
public import NIOCore

/// The header of every message between the server and a render worker process: a version and
/// one ``Message``, as JSON (`Codable`, synthesized: a new error case or request field needs no
/// wire edit).
///
/// A frame, after the 4-byte big-endian length that swift-nio-extras' length-field codecs put
/// before it, is the header's length (UInt32, big-endian), the header, then the body: a card's
/// encoded image bytes, raw, and nothing for every other message. A card of at most
/// ``WorkerBodyFile/limit`` bytes from a worker that has a ``WorkerBodyFile`` is left in that file
/// instead, and its frame says how many bytes it holds (``bodyInFile``) and has no body.
///
/// The conversation: the server sends ``Message/hello`` and the worker answers
/// ``Message/ready`` once it has loaded the catalog and the fonts; then each
/// ``Message/render(_:)`` is answered with ``Message/card(_:restingBytes:)`` or
/// ``Message/failure(_:restingBytes:)``. A header of another version is refused by either side
/// (``WorkerWireError/versionMismatch(received:)``): the server fails to start that worker, and
/// the worker exits, each saying so.
struct WorkerWireHeader: Codable, Sendable {
  /// The version this build speaks. Change it with any change of ``Message`` or of the types it
  /// carries that an older worker would read differently.
  static let currentVersion = 3

  let version: Int
  let message: Message
  /// The request's identity for the worker's log lines (`X-Request-Id`, `traceparent`, put here
  /// by ``RequestIdentityInstrument``); only on a render, and only when the render has a request.
  /// Optional, and absent from the JSON when `nil`: a header without it reads as before.
  let context: [String: String]?
  /// On a card: its bytes are the first `bodyInFile` bytes of the worker's ``WorkerBodyFile``,
  /// not the frame's body. Absent from the JSON when `nil`.
  let bodyInFile: Int?
  /// On a render: how many threads encode a PNG card (``WorkerPool/encoderThreads(rendersInFlight:cores:)``).
  /// Absent from the JSON when `nil` (one).
  let encoderThreads: Int?

  enum Message: Codable, Sendable {
    /// Server to worker, first: the server's version is in the header.
    case hello
    /// Worker to server, after `hello`: the catalog and the fonts are loaded.
    case ready
    /// Server to worker: render this card.
    case render(CardRequest)
    /// Worker to server: the card (its bytes are the frame's body), and the memory the worker
    /// held at rest before the render (``RenderWorker/restingBytes()``).
    case card(CardFacts, restingBytes: Int)
    /// Worker to server: the render failed, and the memory the worker held at rest before it.
    case failure(InnerPeaceError, restingBytes: Int)
  }

  private enum CodingKeys: String, CodingKey { case version, message, context, bodyInFile, encoderThreads }

  init(
    _ message: Message, version: Int = currentVersion, context: [String: String]? = nil, bodyInFile: Int? = nil,
    encoderThreads: Int? = nil
  ) {
    self.version = version
    self.message = message
    self.context = context
    self.bodyInFile = bodyInFile
    self.encoderThreads = encoderThreads
  }

  /// Reads the version first and refuses any other than ``currentVersion`` before it reads the
  /// message (whose shape may differ).
  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    version = try container.decode(Int.self, forKey: .version)
    guard version == Self.currentVersion else { throw WorkerWireError.versionMismatch(received: version) }
    message = try container.decode(Message.self, forKey: .message)
    context = try container.decodeIfPresent([String: String].self, forKey: .context)
    bodyInFile = try container.decodeIfPresent(Int.self, forKey: .bodyInFile)
    encoderThreads = try container.decodeIfPresent(Int.self, forKey: .encoderThreads)
  }
}

/// A frame that cannot be read: bad bytes, or another version of the wire.
enum WorkerWireError: Error, Equatable, CustomStringConvertible {
  /// The other side speaks another version (an older or newer binary).
  case versionMismatch(received: Int)
  case malformed(String)

  var description: String {
    switch self {
    case .versionMismatch(let received):
      "wire version \(received) where this build speaks \(WorkerWireHeader.currentVersion)"
        + " (the server and its workers must be the same binary)"
    case .malformed(let reason): "malformed frame: \(reason)"
    }
  }
}

/// One message and its body, and their bytes inside a length-field frame.
struct WorkerFrame: Sendable {
  var header: WorkerWireHeader
  /// A card's image bytes; empty otherwise.
  var body: ByteBuffer

  init(
    _ message: WorkerWireHeader.Message, body: ByteBuffer = ByteBuffer(), context: [String: String]? = nil,
    encoderThreads: Int? = nil
  ) {
    header = WorkerWireHeader(message, context: context, encoderThreads: encoderThreads)
    self.body = body
  }

  init(header: WorkerWireHeader, body: ByteBuffer) {
    self.header = header
    self.body = body
  }

  /// The header's JSON: encoding typed values, strings and numbers cannot fail.
  static func encodedHeader(_ header: WorkerWireHeader) -> Data {
    (try? JSONEncoder().encode(header)) ?? Data()
  }

  /// The frame's bytes (without the length field the prepender adds).
  func encoded(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
    let header = Self.encodedHeader(self.header)
    var buffer = allocator.buffer(capacity: 4 + header.count + body.readableBytes)
    buffer.writeInteger(UInt32(header.count))
    buffer.writeBytes(header)
    buffer.writeImmutableBuffer(body)
    return buffer
  }

  /// Reads a frame's bytes (without the length field); the body is a slice of `buffer`, not a
  /// copy.
  init(decoding buffer: ByteBuffer) throws(WorkerWireError) {
    var buffer = buffer
    guard let length = buffer.readInteger(as: UInt32.self), let bytes = buffer.readData(length: Int(length)) else {
      throw .malformed("the header is cut short")
    }
    do {
      header = try JSONDecoder().decode(WorkerWireHeader.self, from: bytes)
    } catch let error as WorkerWireError {
      throw error
    } catch {
      throw .malformed("the header cannot be read: \(error)")
    }
    body = buffer
  }
}

/// What the service needs of a rendered card beside its bytes: the facts its headers, its report
/// endpoint and `batch`'s manifest use, and nothing else (no timings, no layout passes).
public struct CardFacts: Codable, Sendable, Equatable {
  public let format: ImageFormat
  /// The catalog index of the quote, or `nil` for custom text.
  public let quoteIndex: Int?
  /// The picture behind the text, or `nil` for a transparent card.
  public let picture: String?
  /// The fitted quote size in pixels.
  public let fontSize: Int
  /// The text did not fit at the minimum legible size and was ellipsized.
  public let truncated: Bool
  /// Glyphs no installed font could draw (tofu).
  public let missingGlyphs: Int
  /// `"<text>" — <author>`, the app's share message.
  public let shareMessage: String
  /// What was set, and how: only when the request asked for it.
  public var report: TypesetReport?

  public init(_ card: RenderedCard) {
    format = card.format
    quoteIndex = card.quoteIndex
    picture = card.picture
    fontSize = card.fontSize
    truncated = card.truncated
    missingGlyphs = card.missingGlyphs
    shareMessage = card.shareMessage
    report = card.report
  }
}

/// A rendered card as the render pool hands it back, wherever it ran: its facts, and its encoded
/// bytes in a `ByteBuffer` (from a worker, a slice of the frame that carried them).
public struct FinishedCard: Sendable {
  public let facts: CardFacts
  public let body: ByteBuffer

  init(facts: CardFacts, body: ByteBuffer) {
    self.facts = facts
    self.body = body
  }

  /// A card rendered in this process.
  init(_ card: RenderedCard) {
    self.init(facts: CardFacts(card), body: ByteBuffer(bytes: card.bytes))
  }

  /// The encoded image, copied out.
  public var bytes: [UInt8] { Array(body.readableBytesView) }
}
