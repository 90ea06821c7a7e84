import Dispatch

/// A card's photo read, checked and decoded on another thread while the calling thread registers
/// the fonts and fits the text (``CardRenderer/renderOne(_:catalog:fontsDirectory:)``).
///
/// It does what the render would do first with the photo, in the same order and with the same
/// errors, and decodes it for the canvas without a zoom. The render then takes the decoded
/// pixels when its crop needs the same decoded size (``ImageDecoding/decodedSize(_:covering:)``),
/// and otherwise decodes the bytes again itself: the card is the same either way.
final class PhotoPrefetch: Sendable {
  /// What the other thread found.
  struct Outcome: Sendable {
    /// The photo as the catalog checked it, for a catalog that checks photos when drawn.
    var checked: (bytes: [UInt8], detail: PictureDetail)?
    /// The photo's bytes, read and checked unchanged; `nil` when that failed (`failure` says why).
    var bytes: [UInt8]?
    /// The pixels decoded to cover `covering`, and the size they were decoded at, as stored.
    var decoded: (pixels: Pixels, storedSize: (width: Int, height: Int))?
    /// The first error of reading or checking the photo, thrown where the render would meet it.
    var failure: InnerPeaceError?
    /// Seconds spent, on the other thread.
    var seconds: Double = 0
  }

  let name: String
  let covering: (width: Int, height: Int)
  private let group = DispatchGroup()
  private let outcome = Locked(Outcome())

  /// Starts reading `name` of `catalog` for a canvas of `canvas` pixels.
  init(catalog: Catalog, name: String, canvas: (width: Int, height: Int)) {
    self.name = name
    self.covering = canvas
    group.enter()
    DispatchQueue.global().async { [self] in
      let found = Self.fetch(catalog: catalog, name: name, covering: canvas)
      outcome.withLock { $0 = found }
      group.leave()
    }
  }

  /// Waits for the other thread and returns what it found.
  func wait() -> Outcome {
    group.wait()
    return outcome.withLock { $0 }
  }

  private static func fetch(catalog: Catalog, name: String, covering: (width: Int, height: Int)) -> Outcome {
    let start = ContinuousClock.now
    var found = Outcome()
    do throws(InnerPeaceError) {
      if catalog.pictureChecking == .whenDrawn {
        let checked = try catalog.checkedPicture(name)
        found.checked = checked
        found.bytes = checked.bytes
      } else {
        found.bytes = try catalog.readPicture(name)
      }
      // A photo that does not decode is left to the render, which names it as it always does.
      if let bytes = found.bytes, case .success(let header) = ImageDecoding.inspect(bytes),
        let pixels = try? ImageDecoding.decode(bytes, covering: covering)
      {
        found.decoded = (pixels, ImageDecoding.decodedSize(header, covering: covering))
      }
    } catch {
      found.failure = error
    }
    found.seconds = (ContinuousClock.now - start) / .seconds(1)
    return found
  }
}
