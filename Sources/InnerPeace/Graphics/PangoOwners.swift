internal import CInnerPeace

/// A rectangle in pixels (Pango works in 1/1024 px; these are converted).
struct PixelRect: Equatable {
  var x: Double
  var y: Double
  var width: Double
  var height: Double

  var maxX: Double { x + width }
  var maxY: Double { y + height }

  func union(_ other: PixelRect) -> PixelRect {
    let minX = Swift.min(x, other.x)
    let minY = Swift.min(y, other.y)
    return PixelRect(
      x: minX, y: minY, width: Swift.max(maxX, other.maxX) - minX, height: Swift.max(maxY, other.maxY) - minY)
  }

  func offsetBy(dx: Double, dy: Double) -> PixelRect { PixelRect(x: x + dx, y: y + dy, width: width, height: height) }

  func scaled(by factor: Double) -> PixelRect {
    PixelRect(x: x * factor, y: y * factor, width: width * factor, height: height * factor)
  }

  init(x: Double, y: Double, width: Double, height: Double) {
    self.x = x
    self.y = y
    self.width = width
    self.height = height
  }

  init(_ rect: PangoRectangle) {
    let scale = Double(innerpeace_pango_scale)
    self.init(
      x: Double(rect.x) / scale, y: Double(rect.y) / scale, width: Double(rect.width) / scale,
      height: Double(rect.height) / scale)
  }
}

/// Owns a `PangoContext` on the calling thread's font map, set up for scalable layout: no
/// hinting of metrics or outlines, so a layout's size follows the font size smoothly.
final class TextContext {
  let handle: OpaquePointer

  init(fontMap: UnsafeMutablePointer<PangoFontMap>) {
    handle = pango_font_map_create_context(fontMap)!
    let options = cairo_font_options_create()!
    cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF)
    cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE)
    cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY)
    pango_cairo_context_set_font_options(handle, options)
    cairo_font_options_destroy(options)
    pango_context_set_round_glyph_positions(handle, 0)
  }

  deinit { FontLock.withLock { g_object_unref(UnsafeMutableRawPointer(handle)) } }
}

/// Owns a `PangoFontDescription`.
final class FontDescription {
  let handle: OpaquePointer

  init(family: String, italic: Bool) {
    handle = pango_font_description_new()!
    pango_font_description_set_family(handle, family)
    pango_font_description_set_style(handle, italic ? PANGO_STYLE_ITALIC : PANGO_STYLE_NORMAL)
  }

  deinit { pango_font_description_free(handle) }

  /// Sets the size in pixels (device units), independent of any resolution.
  func setPixelSize(_ size: Double) {
    pango_font_description_set_absolute_size(handle, size * Double(innerpeace_pango_scale))
  }
}

/// Owns a `PangoLayout`: one paragraph block of plain text (never markup), wrapped to a width.
///
/// Pango lays the text out at one fixed reference size; a different size is that layout scaled.
/// With metric hinting and glyph-position rounding off (see ``TextContext``) a layout scales
/// exactly, and every new size Pango sees costs a font instance and a fontconfig sort (about
/// 1.4 ms each here), so a fit over eight sizes would spend most of its time making fonts.
/// Widths and heights given in pixels are divided by the scale, extents are multiplied by it,
/// and drawing scales the Cairo context.
final class TextLayout {
  enum Alignment { case natural, center }

  /// The size Pango actually lays out at, in pixels.
  static let referenceSize = 128.0

  let handle: OpaquePointer
  private let font: FontDescription
  /// Kept alive as long as the layout uses it.
  private let context: TextContext
  /// Pixel size / reference size.
  private(set) var scale = 1.0
  /// Whether lines that start with a quotation mark, a dash or a bracket hang it into the margin
  /// (see `TextLayout+Hanging.swift`).
  var hangsPunctuation = false
  /// The hanging shifts and the ink they add, for the layout's state with this serial (a fit
  /// asks for the extents more than once per state).
  var hangingCache: (serial: UInt32, shifts: [Int32]?, ink: PangoRectangle?)?

  /// The text's language where the caller knows it (``LanguageTag``); `nil` guesses it from the
  /// text. Set at creation: every text the layout is given is set in it.
  let language: LanguageTag?

  init(context: TextContext, text: String, family: String, language: LanguageTag? = nil) {
    self.context = context
    self.language = language
    handle = pango_layout_new(context.handle)!
    font = FontDescription(family: family, italic: true)
    font.setPixelSize(TextLayout.referenceSize)
    pango_layout_set_font_description(handle, font.handle)
    // set_text, not set_markup: "<b>" is drawn as written.
    pango_layout_set_text(handle, text, Int32(text.utf8.count))
    // Faces, languages, breaks and line height for every script (see TextAttributes).
    applyTextAttributes(for: text)
    pango_layout_set_auto_dir(handle, 1)
    // Break at words, and inside a word (a URL, say) only when the word alone is too wide.
    pango_layout_set_wrap(handle, TextLayout.breaksSafelyInsideWords(handle) ? PANGO_WRAP_WORD_CHAR : PANGO_WRAP_WORD)
  }

  /// Whether Pango can wrap this text with `PANGO_WRAP_WORD_CHAR` without aborting.
  ///
  /// Pango 1.50's line breaker asserts (`process_line`: `result == BREAK_SOME_FIT ||
  /// result == BREAK_EMPTY_FIT`, SIGABRT) when it backs up to an item that holds a word break
  /// (`is_line_break`) but no character break (`is_char_break`) before the width runs out: it
  /// found the break while filling the line with word breaks, then retries the item with
  /// character breaks only, finds none, and takes the whole item. That needs a word break where
  /// there is no character break, which Unicode's line and grapheme rules allow for unusual
  /// sequences (before a skin-tone modifier that follows a combining mark, say). Where every
  /// word break is also a character break, the retry always finds a break. Otherwise the text
  /// is wrapped at word breaks only (`PANGO_WRAP_WORD` never takes that path), so no width can
  /// make Pango abort; a word too wide for the bounds then simply does not fit at that size.
  ///
  /// Reads the break attributes Pango itself computed for this layout, with no width set (an
  /// unwrapped layout never breaks a line, so it cannot assert).
  static func breaksSafelyInsideWords(_ layout: OpaquePointer) -> Bool {
    FontLock.withLock {
      var count: Int32 = 0
      guard let attributes = pango_layout_get_log_attrs_readonly(layout, &count) else { return true }
      // The last entry is the end of the text, where both breaks are always allowed.
      for index in 0..<max(0, Int(count) - 1) {
        let attribute = attributes[index]
        if attribute.is_line_break != 0 && attribute.is_char_break == 0 { return false }
      }
      return true
    }
  }

  deinit { FontLock.withLock { g_object_unref(UnsafeMutableRawPointer(handle)) } }

  /// The size the text is measured and drawn at, in pixels; a size that is not a positive
  /// finite number is taken as one pixel.
  func setPixelSize(_ size: Double) {
    scale = (size.isFinite && size >= 1 ? size : 1) / TextLayout.referenceSize
  }

  /// The largest wrap width or height handed to Pango, in Pango units at the reference size:
  /// 262,144 px, far above any canvas (4096 px at a 12 px minimum size is 43,690 px at the
  /// reference size), and far enough below `Int32.max` that Pango's own sums of widths cannot
  /// overflow.
  static let maximumPangoLength = Double(1 << 28)

  /// A length in pixels at the current size, in Pango units at the reference size, bounded to
  /// one pixel ... ``maximumPangoLength`` (not-a-number counts as one pixel), so the conversion
  /// to `Int32` cannot trap.
  private func pangoLength(_ pixels: Double) -> Int32 {
    // `max` returns its first argument when the second is not a number.
    let units = (max(1, pixels) / scale * Double(innerpeace_pango_scale)).rounded(.down)
    return Int32(min(max(Double(innerpeace_pango_scale), units), TextLayout.maximumPangoLength))
  }

  /// The wrap width in pixels at the current size: never below one pixel, never above
  /// ``maximumPangoLength``, whatever `pixels` is.
  func setWidth(_ pixels: Double) {
    pango_layout_set_width(handle, pangoLength(pixels))
  }

  /// No wrapping: each paragraph on one line.
  func setUnlimitedWidth() { pango_layout_set_width(handle, -1) }

  func setAlignment(_ alignment: Alignment) {
    switch alignment {
    case .natural: pango_layout_set_alignment(handle, PANGO_ALIGN_LEFT)  // flipped for RTL by auto-dir
    case .center: pango_layout_set_alignment(handle, PANGO_ALIGN_CENTER)
    }
  }

  /// Limits the height (pixels at the current size) and ellipsizes the last line that fits.
  func limitHeight(_ pixels: Double) {
    pango_layout_set_ellipsize(handle, PANGO_ELLIPSIZE_END)
    pango_layout_set_height(handle, pangoLength(pixels))
  }

  /// Ink and logical extents in pixels at the current size, relative to the layout's origin.
  var extents: (ink: PixelRect, logical: PixelRect) {
    var ink = PangoRectangle()
    var logical = PangoRectangle()
    FontLock.withLock {
      pango_layout_get_extents(handle, &ink, &logical)
      if let hung = unlockedHangingInk() { ink = ink.union(hung) }
    }
    return (PixelRect(ink).scaled(by: scale), PixelRect(logical).scaled(by: scale))
  }

  /// Everything drawn or reserved: the union of ink and logical extents. Empty ink (spaces only)
  /// is ignored.
  var bounds: PixelRect {
    let (ink, logical) = extents
    return ink.width > 0 && ink.height > 0 ? ink.union(logical) : logical
  }

  /// Whether the first paragraph reads right to left.
  var isRightToLeft: Bool {
    FontLock.withLock {
      guard let line = pango_layout_get_line_readonly(handle, 0) else { return false }
      return line.pointee.resolved_dir == PANGO_DIRECTION_RTL.rawValue
    }
  }

  /// Whether Pango had to ellipsize the text.
  var isEllipsized: Bool { FontLock.withLock { pango_layout_is_ellipsized(handle) != 0 } }

  var lineCount: Int { FontLock.withLock { Int(pango_layout_get_line_count(handle)) } }

  /// Draws the layout at the current size with its top-left corner at (`x`, `y`), in the
  /// context's current source.
  func draw(in context: DrawingContext, x: Double, y: Double) {
    cairo_save(context.handle)
    cairo_translate(context.handle, x, y)
    cairo_scale(context.handle, scale, scale)
    cairo_move_to(context.handle, 0, 0)
    FontLock.withLock {
      if let shifts = unlockedHangingShifts() {
        unlockedDrawLines(in: context.handle, shifts: shifts)
      } else {
        pango_cairo_show_layout(context.handle, handle)
      }
    }
    cairo_restore(context.handle)
  }
}
