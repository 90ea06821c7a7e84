/// `/healthz`.
struct Health: Codable, Sendable {
  let status: String
  let quotes: Int
  let pictures: Int
}
