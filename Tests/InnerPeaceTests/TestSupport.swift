import CInnerPeace
import Foundation
import InnerPeace
import Testing

/// Shared, immutable fixtures and helpers for the core tests. Nothing here is mutable: tests run
/// in parallel, each with its own temporary folder.
enum Fixtures {
  /// The bundled catalog, loaded once.
  static let catalog: Catalog = {
    do { return try Catalog.bundled() } catch { fatalError("the bundled catalog does not load: \(error)") }
  }()

  /// One renderer for the bundled catalog, shared (a `CardRenderer` is `Sendable` and thread-safe).
  static let renderer: CardRenderer = {
    do { return try CardRenderer(catalog: catalog) } catch { fatalError("no renderer: \(error)") }
  }()
}

/// Runs `body` with a fresh, unique temporary folder, removed afterwards.
func withTemporaryFolder<T>(_ label: String = "innerpeace-tests", _ body: (URL) throws -> T) throws -> T {
  let url = FileManager.default.temporaryDirectory
    .appendingPathComponent("\(label)-\(UUID().uuidString)", isDirectory: true)
  try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: url) }
  return try body(url)
}

extension URL {
  func writeText(_ text: String, to name: String) throws {
    try Data(text.utf8).write(to: appendingPathComponent(name))
  }

  func writeBytes(_ bytes: [UInt8], to name: String) throws {
    try Data(bytes).write(to: appendingPathComponent(name))
  }
}

/// The eight-byte PNG signature.
let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

/// Width, height and colour type read straight from a PNG's IHDR chunk (which must come first).
struct PNGHeader: Equatable {
  let width: Int
  let height: Int
  let bitDepth: Int
  let colourType: Int

  init?(_ bytes: [UInt8]) {
    guard bytes.count >= 33, Array(bytes[0..<8]) == pngSignature, Array(bytes[12..<16]) == Array("IHDR".utf8)
    else { return nil }
    func be32(_ offset: Int) -> Int { bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
    width = be32(16)
    height = be32(20)
    bitDepth = Int(bytes[24])
    colourType = Int(bytes[25])
  }
}

/// A decoded image: straight (not premultiplied) RGBA, rows packed.
struct DecodedImage {
  let width: Int
  let height: Int
  /// Whether the source had an alpha channel (Cairo decoded it to ARGB32).
  let hasAlpha: Bool
  var rgba: [UInt8]

  func pixel(_ x: Int, _ y: Int) -> (r: Int, g: Int, b: Int, a: Int) {
    let i = 4 * (y * width + x)
    return (Int(rgba[i]), Int(rgba[i + 1]), Int(rgba[i + 2]), Int(rgba[i + 3]))
  }

  /// Luma (0...255) of a pixel, ignoring alpha.
  func luma(_ x: Int, _ y: Int) -> Double {
    let p = pixel(x, y)
    return 0.299 * Double(p.r) + 0.587 * Double(p.g) + 0.114 * Double(p.b)
  }

  /// A box downscale by an integer factor (RGB averaged, alpha averaged).
  func downscaled(by factor: Int) -> DecodedImage {
    precondition(factor >= 1 && width % factor == 0 && height % factor == 0)
    if factor == 1 { return self }
    let w = width / factor
    let h = height / factor
    var out = [UInt8](repeating: 0, count: w * h * 4)
    let area = factor * factor
    for y in 0..<h {
      for x in 0..<w {
        var sums = (0, 0, 0, 0)
        for dy in 0..<factor {
          let row = (y * factor + dy) * width
          for dx in 0..<factor {
            let i = 4 * (row + x * factor + dx)
            sums.0 += Int(rgba[i])
            sums.1 += Int(rgba[i + 1])
            sums.2 += Int(rgba[i + 2])
            sums.3 += Int(rgba[i + 3])
          }
        }
        let o = 4 * (y * w + x)
        out[o] = UInt8((sums.0 + area / 2) / area)
        out[o + 1] = UInt8((sums.1 + area / 2) / area)
        out[o + 2] = UInt8((sums.2 + area / 2) / area)
        out[o + 3] = UInt8((sums.3 + area / 2) / area)
      }
    }
    return DecodedImage(width: w, height: h, hasAlpha: hasAlpha, rgba: out)
  }
}

enum PNGCodec {
  struct Failure: Error, CustomStringConvertible {
    let description: String
  }

  /// Decodes PNG bytes with Cairo (through libpng), independently of innerpeace's own PNG writer.
  static func decode(_ bytes: [UInt8]) throws -> DecodedImage {
    try withTemporaryFolder("innerpeace-decode") { folder in
      let file = folder.appendingPathComponent("image.png")
      try Data(bytes).write(to: file)
      return try decode(file: file)
    }
  }

  static func decode(file: URL) throws -> DecodedImage {
    guard let surface = cairo_image_surface_create_from_png(file.path) else {
      throw Failure(description: "cairo returned no surface")
    }
    defer { cairo_surface_destroy(surface) }
    let status = cairo_surface_status(surface)
    guard status == CAIRO_STATUS_SUCCESS else {
      throw Failure(
        description:
          "cairo could not decode \(file.lastPathComponent): \(String(cString: cairo_status_to_string(status)))")
    }
    cairo_surface_flush(surface)
    let width = Int(cairo_image_surface_get_width(surface))
    let height = Int(cairo_image_surface_get_height(surface))
    let stride = Int(cairo_image_surface_get_stride(surface))
    let format = cairo_image_surface_get_format(surface)
    let hasAlpha = format == CAIRO_FORMAT_ARGB32
    guard format == CAIRO_FORMAT_ARGB32 || format == CAIRO_FORMAT_RGB24 else {
      throw Failure(description: "unexpected Cairo format \(format)")
    }
    let data = cairo_image_surface_get_data(surface)!
    var rgba = [UInt8](repeating: 0, count: width * height * 4)
    for y in 0..<height {
      let row = data + y * stride
      for x in 0..<width {
        // Cairo keeps native-endian 32-bit ARGB, premultiplied: B G R A in memory on little-endian.
        let b = Int(row[4 * x])
        let g = Int(row[4 * x + 1])
        let r = Int(row[4 * x + 2])
        let a = hasAlpha ? Int(row[4 * x + 3]) : 255
        let o = 4 * (y * width + x)
        if a == 0 {
          rgba[o] = 0
          rgba[o + 1] = 0
          rgba[o + 2] = 0
        } else if a == 255 {
          rgba[o] = UInt8(r)
          rgba[o + 1] = UInt8(g)
          rgba[o + 2] = UInt8(b)
        } else {
          rgba[o] = UInt8(min(255, (r * 255 + a / 2) / a))
          rgba[o + 1] = UInt8(min(255, (g * 255 + a / 2) / a))
          rgba[o + 2] = UInt8(min(255, (b * 255 + a / 2) / a))
        }
        rgba[o + 3] = UInt8(a)
      }
    }
    return DecodedImage(width: width, height: height, hasAlpha: hasAlpha, rgba: rgba)
  }

  /// Writes an opaque RGB PNG (Cairo RGB24 → PNG colour type 2) of `image`, ignoring its alpha.
  static func writeRGB(_ image: DecodedImage, to file: URL) throws {
    guard let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(image.width), Int32(image.height)),
      cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS
    else { throw Failure(description: "cairo could not create a surface") }
    defer { cairo_surface_destroy(surface) }
    cairo_surface_flush(surface)
    let stride = Int(cairo_image_surface_get_stride(surface))
    let data = cairo_image_surface_get_data(surface)!
    for y in 0..<image.height {
      let row = data + y * stride
      for x in 0..<image.width {
        let i = 4 * (y * image.width + x)
        row[4 * x] = image.rgba[i + 2]
        row[4 * x + 1] = image.rgba[i + 1]
        row[4 * x + 2] = image.rgba[i]
        row[4 * x + 3] = 255
      }
    }
    cairo_surface_mark_dirty(surface)
    let status = cairo_surface_write_to_png(surface, file.path)
    guard status == CAIRO_STATUS_SUCCESS else {
      throw Failure(
        description: "cairo could not write \(file.path): \(String(cString: cairo_status_to_string(status)))")
    }
  }

  /// A solid-colour opaque PNG, for catalogs whose background must be known exactly.
  static func solidPNG(width: Int, height: Int, grey: UInt8) throws -> [UInt8] {
    try withTemporaryFolder("innerpeace-solid") { folder in
      let file = folder.appendingPathComponent("solid.png")
      let image = DecodedImage(
        width: width, height: height, hasAlpha: false,
        rgba: [UInt8](repeating: grey, count: width * height * 4))
      try writeRGB(image, to: file)
      return [UInt8](try Data(contentsOf: file))
    }
  }
}

/// The bytes of a bundled photo, for building small catalogs in temporary folders.
func bundledPhotoBytes(_ name: String = "aqua.jpg") throws -> [UInt8] {
  [UInt8](try Data(contentsOf: Fixtures.catalog.directory.appendingPathComponent(name)))
}

/// The error of type `Failure` that `body` throws, or `nil` (recording an issue) if it throws
/// nothing or another error.
func thrownError<Failure: Error, T>(
  _ type: Failure.Type, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T
) -> Failure? {
  do {
    _ = try body()
    Issue.record("expected a \(Failure.self), but nothing was thrown", sourceLocation: sourceLocation)
    return nil
  } catch let error as Failure {
    return error
  } catch {
    Issue.record("expected a \(Failure.self), got \(error)", sourceLocation: sourceLocation)
    return nil
  }
}

/// Runs `body` and returns the ``InnerPeaceError`` it throws, or records an issue if it throws
/// nothing or something else.
func innerPeaceError<T>(
  sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T
) -> InnerPeaceError? {
  do {
    _ = try body()
    Issue.record("expected an InnerPeaceError, but nothing was thrown", sourceLocation: sourceLocation)
    return nil
  } catch let error as InnerPeaceError {
    return error
  } catch {
    Issue.record("expected an InnerPeaceError, got \(error)", sourceLocation: sourceLocation)
    return nil
  }
}

// MARK: Tags

/// What a suite needs beyond this process, so `bash scripts/test.sh --fast` can leave it out
/// (it skips every suite and test carrying one of these tags).
extension Tag {
  /// Real sockets: a server listening on loopback, talked to over TCP.
  @Tag static var live: Self
  /// Child processes: render workers, or the server or command run as processes.
  @Tag static var process: Self
  /// The built `innerpeace` binary (`swift build` first).
  @Tag static var binary: Self
}
