/// PNG scanline filtering (RFC 2083 §6): per row, the filter whose output has the smallest sum
/// of absolute values (as signed bytes), libpng's own heuristic.
enum PNGFilter {
  @inline(__always)
  private static func paeth(_ a: Int, _ b: Int, _ c: Int) -> Int {
    let p = a + b - c
    let pa = abs(p - a)
    let pb = abs(p - b)
    let pc = abs(p - c)
    if pa <= pb && pa <= pc { return a }
    return pb <= pc ? b : c
  }

  @inline(__always)
  private static func cost(_ value: Int) -> Int {
    let byte = value & 0xFF
    return byte < 128 ? byte : 256 - byte
  }

  /// Writes the filter type byte and the filtered row to `target` (`count + 1` bytes).
  static func filterRow(
    current: UnsafePointer<UInt8>, previous: UnsafePointer<UInt8>, count: Int, bytesPerPixel bpp: Int,
    into target: UnsafeMutablePointer<UInt8>
  ) {
    var costSub = 0
    var costUp = 0
    var costAverage = 0
    var costPaeth = 0
    for i in 0..<count {
      let x = Int(current[i])
      let a = i >= bpp ? Int(current[i - bpp]) : 0
      let b = Int(previous[i])
      let c = i >= bpp ? Int(previous[i - bpp]) : 0
      costSub &+= cost(x - a)
      costUp &+= cost(x - b)
      costAverage &+= cost(x - (a + b) >> 1)
      costPaeth &+= cost(x - paeth(a, b, c))
    }
    let best = min(costSub, costUp, costAverage, costPaeth)
    let row = target + 1
    if best == costUp {
      target[0] = 2
      for i in 0..<count { row[i] = current[i] &- previous[i] }
    } else if best == costSub {
      target[0] = 1
      for i in 0..<bpp { row[i] = current[i] }
      for i in bpp..<count { row[i] = current[i] &- current[i - bpp] }
    } else if best == costPaeth {
      target[0] = 4
      for i in 0..<bpp { row[i] = current[i] &- previous[i] }
      for i in bpp..<count {
        row[i] = current[i] &- UInt8(paeth(Int(current[i - bpp]), Int(previous[i]), Int(previous[i - bpp])))
      }
    } else {
      target[0] = 3
      for i in 0..<bpp { row[i] = current[i] &- previous[i] >> 1 }
      for i in bpp..<count {
        row[i] = current[i] &- UInt8((Int(current[i - bpp]) + Int(previous[i])) >> 1)
      }
    }
  }
}
