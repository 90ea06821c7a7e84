/// A daily schedule that cannot be made, each with a one-line description in neutral words (no
/// option names). Only ``DailySchedule`` throws these; no render does.
public enum ScheduleError: Error, Equatable, Sendable, CustomStringConvertible {
  /// A number of days outside 1 through `maximum`.
  case dayCountOutOfRange(Int, maximum: Int)
  /// An hour of the day outside 0 through 23.
  case hourOutOfRange(Int)

  public var description: String {
    switch self {
    case .dayCountOutOfRange(let days, let maximum): "days \(days) must be from 1 to \(maximum)"
    case .hourOutOfRange(let hour): "hour \(hour) must be from 0 to 23"
    }
  }
}
