import Crypto

extension SHA256.Digest {
  /// The digest in lowercase hex, as `sha256sum` prints it.
  var hex: String {
    var text = ""
    for byte in self {
      text.append(Self.digits[Int(byte >> 4)])
      text.append(Self.digits[Int(byte & 0x0F)])
    }
    return text
  }

  private static let digits = Array("0123456789abcdef")
}
