/// Every limit a request is checked against, in one documented place.
public enum Limits {
  /// Smallest canvas side, in pixels.
  public static let minimumSide = 200
  /// Largest canvas side, in pixels.
  public static let maximumSide = 4096
  /// Largest canvas area, in pixels (4096 x 4096).
  public static let maximumPixels = 4096 * 4096
  /// Longest quote text, in characters (grapheme clusters).
  public static let maximumTextCharacters = 5_000
  /// Longest quote text, in UTF-8 bytes.
  public static let maximumTextBytes = 20_000
  /// Longest author name, in characters.
  public static let maximumAuthorCharacters = 200
  /// Most combining marks allowed on one character (stops "zalgo" towers that no font can set).
  public static let maximumCombiningMarksPerCharacter = 8
  /// Most bidi control characters in one text (embeddings, overrides, isolates, their
  /// terminators, and the marks LRM, RLM and ALM).
  public static let maximumBidiControls = 256
  /// Deepest nesting of bidi embeddings, overrides and isolates in one paragraph (the Unicode
  /// Bidirectional Algorithm allows 125; real text rarely needs more than two or three).
  public static let maximumBidiNesting = 16
}
