extension Limits {
  // MARK: Photos
  //
  // Checked once per photo at catalog load, from the file's size and header alone, and again
  // before every decode (the file may have been swapped since).

  /// Largest photo file, in bytes (64 MiB). A bigger file is refused from its size alone, unread.
  public static let maximumPictureBytes = 64 << 20
  /// Largest photo, in pixels: 50 megapixels, imgproxy's default `IMGPROXY_MAX_SRC_RESOLUTION`.
  /// A full-size decode of one is 200 MB; JPEG and PNG decoding reduce it as they go.
  public static let maximumPicturePixels = 50_000_000
  /// Longest photo side, in pixels. Cairo cannot make an image over 32,767 px on a side, and a
  /// photo may have to be decoded at full size for a large canvas.
  public static let maximumPictureSide = 30_000
  /// How many times its short side a photo's long side may be (20:1; a canvas is at most
  /// 4096:200). Past that, covering a canvas would scale a sliver by thousands, beyond Cairo's
  /// fixed-point coordinate range.
  public static let maximumPictureAspectRatio = 20

  /// Why a photo of this size cannot be used, or `nil` if it can.
  static func pictureSizeProblem(width: Int, height: Int) -> String? {
    guard width > 0, height > 0 else { return "the image has no pixels (\(width) x \(height))" }
    if width > maximumPictureSide || height > maximumPictureSide {
      return "\(width) x \(height) pixels: a side is over the limit of \(maximumPictureSide)"
    }
    if width * height > maximumPicturePixels {
      return
        "\(width) x \(height) pixels is over the limit of \(maximumPicturePixels / 1_000_000) megapixels"
    }
    if max(width, height) > maximumPictureAspectRatio * min(width, height) {
      return
        "\(width) x \(height) pixels: one side is over \(maximumPictureAspectRatio) times the other"
    }
    return nil
  }
}
