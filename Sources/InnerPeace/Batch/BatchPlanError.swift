/// A batch run that cannot be planned, each with a one-line description in neutral words (no
/// option names: the command line adds its own, ``BatchPlan`` has no idea where a value came
/// from). Only ``BatchPlan`` and ``Shard`` throw these; no render does.
public enum BatchPlanError: Error, Equatable, Sendable, CustomStringConvertible {
  /// A shard that is not of the form `I/N` with whole numbers.
  case shardMalformed(String)
  /// A shard `index` of `count` outside 1 <= index <= count <= ``Shard/maximumCount``.
  case shardOutOfRange(index: Int, count: Int)
  /// A batch with no preset to render.
  case presetListEmpty
  /// A number of quotes outside 1 through `maximum` (the catalog's size).
  case quoteCountOutOfRange(Int, maximum: Int)

  public var description: String {
    switch self {
    case .shardMalformed(let text):
      "shard '\(text)' is not of the form I/N (e.g. 2/8)"
    case .shardOutOfRange(let index, let count):
      "shard \(index)/\(count): I must be from 1 to N, and N from 1 to \(Shard.maximumCount)"
    case .presetListEmpty:
      "preset: at least one preset is needed"
    case .quoteCountOutOfRange(let count, let maximum):
      "count \(count) must be from 1 to \(maximum), the catalog's size"
    }
  }
}
