internal import CInnerPeace

/// Hanging punctuation: a line that starts with an opening quotation mark, a dash or a bracket
/// is moved by the width of those marks (and any space after them) into the margin, so its first
/// letter lines up with the first letters of the other lines: to the left in left-to-right text,
/// to the right in right-to-left text. Pango has no such setting, so the shift is per line: the
/// layout is drawn line by line, each line moved by its shift, and its ink extents include the
/// moved marks (so the block a fit measures, and the halo image drawn around it, hold them).
///
/// Only a flush edge hangs: layouts with natural alignment (see ``TextFitter``). Centred lines
/// have no common edge to align, and are set as they are.
extension TextLayout {
  /// Whether `scalar` hangs when it starts a line: opening (and, for the languages that open
  /// with them, closing) quotation marks and guillemets, dashes and opening brackets.
  static func hangs(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar {
    case "\"", "'", "\u{201C}", "\u{2018}", "\u{201E}", "\u{201A}", "\u{201D}", "\u{2019}", "\u{201F}", "\u{201B}",
      "\u{00AB}", "\u{00BB}", "\u{2039}", "\u{203A}", "\u{2E42}":
      return true  // quotation marks and guillemets
    case "-", "\u{2010}", "\u{2012}", "\u{2013}", "\u{2014}", "\u{2015}", "\u{2212}":
      return true  // hyphen-minus, hyphen, figure, en, em and horizontal bar dash, minus
    case "(", "[", "{", "\u{2768}", "\u{27E8}", "\u{3008}":
      return true  // opening brackets
    default:
      return false
    }
  }

  /// Whether `text` has anything that could hang (so a layout without any skips the per-line
  /// work).
  static func mayHang(_ text: String) -> Bool { text.unicodeScalars.contains(where: hangs) }

  /// Each line's shift in Pango units at the reference size (negative: to the left), or `nil`
  /// when no line hangs. Call with the font lock held.
  ///
  /// A line hangs when, in logical order, it starts with one or more marks that hang (format
  /// characters such as directional marks skipped), followed by optional white space and then
  /// something else: the shift is the distance from the first mark's leading edge to that
  /// character's leading edge, in the line's direction (a mark that bidi moved away from the
  /// line's starting edge does not hang). A line of marks alone stays as it is.
  func unlockedHangingShifts() -> [Int32]? {
    guard hangsPunctuation else { return nil }
    return unlockedHanging().shifts
  }

  /// The ink of the hanging lines where they are drawn (Pango units at the reference size), or
  /// `nil` when no line hangs. Call with the font lock held.
  func unlockedHangingInk() -> PangoRectangle? {
    guard hangsPunctuation else { return nil }
    return unlockedHanging().ink
  }

  /// The shifts and the ink, for the layout's current state: computed once per state.
  private func unlockedHanging() -> (shifts: [Int32]?, ink: PangoRectangle?) {
    let serial = UInt32(pango_layout_get_serial(handle))
    if let cache = hangingCache, cache.serial == serial { return (cache.shifts, cache.ink) }
    let shifts = unlockedComputeShifts()
    let ink = shifts.flatMap { unlockedInk(of: $0) }
    hangingCache = (serial, shifts, ink)
    return (shifts, ink)
  }

  private func unlockedComputeShifts() -> [Int32]? {
    guard let text = pango_layout_get_text(handle) else { return nil }
    let count = Int(pango_layout_get_line_count(handle))
    var shifts = [Int32](repeating: 0, count: count)
    var any = false
    for index in 0..<count {
      guard let line = pango_layout_get_line_readonly(handle, Int32(index)) else { continue }
      let start = Int(line.pointee.start_index)
      let end = start + Int(line.pointee.length)
      guard let (mark, letter) = TextLayout.hangingSpan(text, from: start, to: end) else { continue }
      var markPosition = PangoRectangle()
      var letterPosition = PangoRectangle()
      pango_layout_index_to_pos(handle, Int32(mark), &markPosition)
      pango_layout_index_to_pos(handle, Int32(letter), &letterPosition)
      let shift = markPosition.x - letterPosition.x
      let rightToLeft = line.pointee.resolved_dir == PANGO_DIRECTION_RTL.rawValue
      guard rightToLeft ? shift > 0 : shift < 0 else { continue }
      shifts[index] = shift
      any = true
    }
    return any ? shifts : nil
  }

  /// The byte offsets of the first hanging mark and of the first character after the marks and
  /// the white space that follows them, in the line from byte `start` to `end` of the layout's
  /// NUL-terminated UTF-8 text; `nil` when the line does not start with a mark or has nothing
  /// after them.
  static func hangingSpan(_ text: UnsafePointer<CChar>, from start: Int, to end: Int) -> (Int, Int)? {
    let base = UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self) + start
    var bytes = UnsafeBufferPointer(start: base, count: max(0, end - start)).makeIterator()
    var decoder = UTF8()
    var offset = 0
    var mark: Int?
    var afterMarks = false
    while case .scalarValue(let scalar) = decoder.decode(&bytes) {
      let position = start + offset
      offset += UTF8.width(scalar)
      if scalar.properties.generalCategory == .format { continue }
      if !afterMarks && TextLayout.hangs(scalar) {
        if mark == nil { mark = position }
        continue
      }
      guard let mark else { return nil }
      afterMarks = true
      if scalar.properties.isWhitespace { continue }
      // A mark after the space ("— “Yes"): the line starts with marks set apart, not a word.
      return TextLayout.hangs(scalar) ? nil : (mark, position)
    }
    return nil
  }

  /// The union of the hanging lines' ink where they are drawn, moved by `shifts` (Pango units
  /// at the reference size); `nil` when they have none.
  private func unlockedInk(of shifts: [Int32]) -> PangoRectangle? {
    guard let iterator = pango_layout_get_iter(handle) else { return nil }
    defer { pango_layout_iter_free(iterator) }
    var union: PangoRectangle?
    var index = 0
    repeat {
      if index < shifts.count, shifts[index] != 0 {
        var lineInk = PangoRectangle()
        pango_layout_iter_get_line_extents(iterator, &lineInk, nil)
        if lineInk.width > 0 && lineInk.height > 0 {
          lineInk.x += shifts[index]
          union = union.map { $0.union(lineInk) } ?? lineInk
        }
      }
      index += 1
    } while pango_layout_iter_next_line(iterator) != 0
    return union
  }

  /// Draws the layout line by line, each line moved by its shift (Pango units at the reference
  /// size), in a context already translated to the layout's origin and scaled.
  func unlockedDrawLines(in context: OpaquePointer, shifts: [Int32]) {
    guard let iterator = pango_layout_get_iter(handle) else { return }
    defer { pango_layout_iter_free(iterator) }
    let unit = Double(innerpeace_pango_scale)
    var index = 0
    repeat {
      var logical = PangoRectangle()
      pango_layout_iter_get_line_extents(iterator, nil, &logical)
      let baseline = pango_layout_iter_get_baseline(iterator)
      let shift = index < shifts.count ? shifts[index] : 0
      if let line = pango_layout_iter_get_line_readonly(iterator) {
        cairo_move_to(context, Double(logical.x + shift) / unit, Double(baseline) / unit)
        pango_cairo_show_layout_line(context, line)
      }
      index += 1
    } while pango_layout_iter_next_line(iterator) != 0
  }
}

extension PangoRectangle {
  /// The smallest rectangle holding both (Pango units).
  func union(_ other: PangoRectangle) -> PangoRectangle {
    let left = min(x, other.x)
    let top = min(y, other.y)
    let right = max(x + width, other.x + other.width)
    let bottom = max(y + height, other.y + other.height)
    return PangoRectangle(x: left, y: top, width: right - left, height: bottom - top)
  }
}
