/// Times the stages of one render: the render makes one, wraps each stage in
/// ``measure(_:_:)``, and reads ``timings`` at the end.
final class StageClock {
  enum Stage { case decode, scale, fit, blur, draw, encode }

  /// Reads the time: the continuous clock's, or a test's own.
  private let now: () -> ContinuousClock.Instant
  /// The time measured so far, stage by stage.
  private(set) var timings = StageTimings()

  init(now: @escaping () -> ContinuousClock.Instant = { ContinuousClock.now }) { self.now = now }

  /// Runs `body` and adds the time it took to `stage` (also when it throws).
  func measure<Value, Failure: Error>(_ stage: Stage, _ body: () throws(Failure) -> Value) throws(Failure) -> Value {
    let start = now()
    defer { add(now() - start, to: stage) }
    return try body()
  }

  private func add(_ duration: Duration, to stage: Stage) { add(seconds: duration / .seconds(1), to: stage) }

  /// Adds time measured elsewhere (on another thread) to `stage`.
  func add(seconds: Double, to stage: Stage) {
    switch stage {
    case .decode: timings.decode += seconds
    case .scale: timings.scale += seconds
    case .fit: timings.fit += seconds
    case .blur: timings.blur += seconds
    case .draw: timings.draw += seconds
    case .encode: timings.encode += seconds
    }
  }
}
