import Foundation
import InnerPeace
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Encoded pages of `/quotes`, by key (origin, offset, end; the catalog's version is fixed for
/// the service's life), in a bounded LRU: a page is encoded once, on NIO's blocking thread pool
/// (never on an event loop or the tasks' threads), and then served from here.
final class QuoteListCache: Sendable {
  private let pages: NIOLockedValueBox<ByteBoundedLRU<String, ByteBuffer>>

  /// - Parameter capacityBytes: the most encoded JSON kept (16 MiB: every page of a 40,000-quote
  ///   catalog for one origin).
  init(capacityBytes: Int = 16 << 20) {
    pages = NIOLockedValueBox(ByteBoundedLRU(capacityBytes: capacityBytes))
  }

  /// The page for `key`, from the cache or encoded by `encode` (then kept).
  func page(key: String, encode: @escaping @Sendable () throws -> Data) async throws -> ByteBuffer {
    if let page = pages.withLockedValue({ $0.value(forKey: key) }) { return page }
    let data = try await NIOThreadPool.singleton.runIfActive { try encode() }
    let page = ByteBuffer(bytes: data)
    pages.withLockedValue { _ = $0.insert(page, cost: page.readableBytes, forKey: key) }
    return page
  }

  /// Pages kept.
  var count: Int { pages.withLockedValue { $0.count } }
}
