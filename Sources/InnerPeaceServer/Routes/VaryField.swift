import HTTPTypes

extension HTTPFields {
  /// Adds `name` to the one `Vary` field of a response, kept with the names it already lists
  /// (nothing changes when it lists `name` or `*`). One field, not several: some caches read only
  /// the first `Vary` line.
  mutating func addVary(_ name: String) {
    let existing = self[values: .vary].joined(separator: ", ")
    guard !existing.isEmpty else {
      self[.vary] = name
      return
    }
    let names = existing.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
    if names.contains(name.lowercased()) || names.contains("*") {
      self[.vary] = existing
    } else {
      self[.vary] = existing + ", " + name
    }
  }
}
