import Dispatch

/// A card's photo read, checked and decoded on another thread while the calling thread registers
/// the fonts and fits the text (``CardRenderer/renderOne(_:catalog:fontsDirectory:)``).
///
/// It does what the render would do first with the photo, in the same order and with the same
/// errors (``read()``), then decodes it for the canvas without a zoom (``decoded()``). The render
/// takes those pixels when its crop needs the same decoded size
/// (``ImageDecoding/decodedSize(_:covering:)``), and otherwise decodes the bytes again for the
/// crop: the card is the same either way.
final class PhotoPrefetch: Sendable {
  /// The photo as read and checked.
  struct Read: Sendable {
    /// The photo as the catalog checked it, for a catalog that checks photos when drawn.
    var checked: (bytes: [UInt8], detail: PictureDetail)?
    /// The photo's bytes, read and checked unchanged; `nil` when that failed (`failure` says why).
    var bytes: [UInt8]?
    /// The first error of reading or checking the photo, thrown where the render would meet it.
    var failure: InnerPeaceError?
  }

  let name: String
  let covering: (width: Int, height: Int)
  private let readGroup = DispatchGroup()
  private let decodeGroup = DispatchGroup()
  private let state = Locked<(read: Read?, decoded: Pixels?, seconds: Double)>((nil, nil, 0))

  /// Starts reading `name` of `catalog` for a canvas of `canvas` pixels.
  init(catalog: Catalog, name: String, canvas: (width: Int, height: Int)) {
    self.name = name
    self.covering = canvas
    readGroup.enter()
    decodeGroup.enter()
    DispatchQueue.global().async { [self] in
      let start = ContinuousClock.now
      let read = Self.read(catalog: catalog, name: name)
      state.withLock { $0.read = read }
      readGroup.leave()
      // A photo that does not decode is left to the render, which names it as it always does.
      let decoded = read.bytes.flatMap { try? ImageDecoding.decode($0, covering: canvas) }
      let seconds = (ContinuousClock.now - start) / .seconds(1)
      state.withLock { $0 = ($0.read, decoded, seconds) }
      decodeGroup.leave()
    }
  }

  /// Waits until the photo is read and checked.
  func read() -> Read {
    readGroup.wait()
    return state.withLock { $0.read! }
  }

  /// Waits until the photo is decoded too: the pixels decoded to cover ``covering``, `nil` when
  /// it did not decode.
  func decoded() -> Pixels? {
    decodeGroup.wait()
    return state.withLock { $0.decoded }
  }

  /// Waits for the other thread to finish, and returns the seconds it worked.
  func finish() -> Double {
    decodeGroup.wait()
    return state.withLock { $0.seconds }
  }

  private static func read(catalog: Catalog, name: String) -> Read {
    var found = Read()
    do throws(InnerPeaceError) {
      if catalog.pictureChecking == .whenDrawn {
        let checked = try catalog.checkedPicture(name)
        found.checked = checked
        found.bytes = checked.bytes
      } else {
        found.bytes = try catalog.readPicture(name)
      }
    } catch {
      found.failure = error
    }
    return found
  }
}
