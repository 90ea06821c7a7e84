import FuzzSupport
import InnerPeace

/// The PNG and WebP encoders: a small Cairo image from the input, encoded as PNG with each set of
/// loops (AVX-512, AVX2, SSE2 and plain C) and on two threads (the files must be the same bytes), then
/// decoded by libpng's own reader, which must give back exactly the pixels encoded (RGB, or straight
/// RGBA unpremultiplied as Cairo's pixels are). An opaque image is also encoded as WebP with each
/// set of loops (SSE2, plain C), at a quality from the input, the loop filter off: the files must be
/// the same bytes, and libwebp must decode them to exactly the encoder's reconstruction. Anything
/// else is a crash.
///
/// Input: width - 1 and height - 1 (two bytes each, little-endian, taken modulo 300, the height
/// modulo 40 unless flags bit 4 is set), a flags byte (bit 0: alpha; bits 1-3: extra row padding
/// in pixels; bit 4: tall), then the pixels' bytes (B G R A; the first is also the WebP quality, modulo 101),
/// repeated to fill the image (a short input makes a flat image, a long one noise or a picture).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEncoder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  guard let data, size >= 6 else { return 0 }
  let input = UnsafeBufferPointer(start: data, count: size)
  let width = (Int(input[0]) | Int(input[1]) << 8) % 300 + 1
  // Most images are short (fast to check); flags bit 4 allows up to 300 rows, several bands.
  let height = (Int(input[2]) | Int(input[3]) << 8) % (input[4] & 16 == 0 ? 40 : 300) + 1
  let alpha = input[4] & 1 == 1
  let stride = (width + Int(input[4] >> 1 & 7)) * 4
  let source = input[5...]
  var pixels = [UInt8](repeating: 0, count: stride * height)
  var next = source.startIndex
  for index in pixels.indices {
    pixels[index] = source[next]
    next = next + 1 == source.endIndex ? source.startIndex : next + 1
  }
  let (files, threaded) = pixels.withUnsafeBufferPointer { buffer in
    (
      ImageEncoding.PNGKernels.allCases.map { kernels in
        try? ImageEncoding.png(
          pixels: buffer.baseAddress!, stride: stride, width: width, height: height, alpha: alpha, kernels: kernels)
      },
      // A tall image has two or three bands: each thread codes some.
      try? ImageEncoding.png(
        pixels: buffer.baseAddress!, stride: stride, width: width, height: height, alpha: alpha, threads: 2)
    )
  }
  guard let vector = files[0] else { preconditionFailure("the encoder failed on a \(width)x\(height) image") }
  precondition(files.allSatisfy { $0 == vector }, "the loops (AVX-512, AVX2, SSE2, plain C) wrote different files")
  precondition(threaded == vector, "two threads wrote another file than one")
  let decoded: [UInt8]
  do {
    decoded = try ImageDecoding.exactPixels(ofPNG: vector, width: width, height: height, channels: alpha ? 4 : 3)
  } catch {
    preconditionFailure("libpng refused the file: \(error)")
  }
  var offset = 0
  for y in 0..<height {
    for x in 0..<width {
      let pixel = y * stride + x * 4
      let (b, g, r, a) = (Int(pixels[pixel]), Int(pixels[pixel + 1]), Int(pixels[pixel + 2]), Int(pixels[pixel + 3]))
      let expected: [Int]
      if !alpha {
        expected = [r, g, b]
      } else if a == 255 {
        expected = [r, g, b, a]
      } else if a == 0 {
        expected = [0, 0, 0, 0]
      } else {
        expected = [r, g, b].map { min(255, ($0 * 255 + a / 2) / a) } + [a]
      }
      for channel in expected {
        precondition(Int(decoded[offset]) == channel, "pixel (\(x), \(y)) decodes to other values")
        offset += 1
      }
    }
  }
  if !alpha { checkWebP(pixels, stride: stride, width: width, height: height, quality: Int(source.first!) % 101) }
  return 0
}

func checkWebP(_ pixels: [UInt8], stride: Int, width: Int, height: Int, quality: Int) {
  let results = pixels.withUnsafeBufferPointer { buffer in
    ImageEncoding.WebPKernels.allCases.map { kernels in
      try? ImageEncoding.webp(
        pixels: buffer.baseAddress!, stride: stride, width: width, height: height, quality: quality,
        loopFilter: false, kernels: kernels, reconstruction: true)
    }
  }
  guard let first = results[0] else { preconditionFailure("the WebP encoder failed on a \(width)x\(height) image") }
  precondition(
    results.allSatisfy { $0?.file == first.file && $0?.reconstruction == first.reconstruction },
    "the WebP loops (SSE2, plain C) wrote different files")
  let decoded: [UInt8]
  do {
    decoded = try ImageDecoding.webpPlanes(of: first.file, width: width, height: height)
  } catch {
    preconditionFailure("libwebp refused the file: \(error)")
  }
  precondition(decoded == first.reconstruction, "libwebp decodes the WebP to other planes than the encoder's")
}

@main
enum FuzzEncoder {
  static func main() { FuzzDriver.main(fuzzEncoder) }
}
