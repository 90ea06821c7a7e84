import Foundation
import FuzzSupport

#if DEBUG
  @testable import InnerPeace

  /// The catalog loader: the bytes of a `quotes.json` or a `pictures.json` through the parser and
  /// every check the loader makes (pictures are looked up in the bundled catalog's folder, so
  /// real names pass and the photo header check runs). Errors are answers; a trap is a crash.
  ///
  /// Input: byte 0 chooses the file (even: quotes.json, odd: pictures.json); the rest is the
  /// file's bytes.
  @_cdecl("LLVMFuzzerTestOneInput")
  public func fuzzCatalog(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let json = Data(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let folder = FuzzCatalogFolder.bundled
    if data[0] & 1 == 0 {
      _ = try? Catalog.quotes(fromJSON: json, file: folder.appendingPathComponent("quotes.json"))
    } else {
      _ = try? Catalog.pictures(fromJSON: json, file: folder.appendingPathComponent("pictures.json"), in: folder)
    }
    return 0
  }

  enum FuzzCatalogFolder {
    static let bundled: URL = {
      guard let directory = try? Catalog.bundled().directory else {
        fatalError("the fuzz target needs the bundled catalog")
      }
      return directory
    }()
  }

  @main
  enum FuzzCatalog {
    static func main() { FuzzDriver.main(fuzzCatalog) }
  }
#else
  /// The target uses the loader's internal entry points, visible in debug builds only.
  @main
  enum FuzzCatalog {
    static func main() { print("FuzzCatalog runs in debug builds only (swift build -c debug)") }
  }
#endif
