import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InnerPeace
import Logging
import Testing

@testable import InnerPeaceServer

/// A photo replaced or rewritten on disk while the service runs is noticed at its next decode and
/// never served under the content version of the old bytes: its cards answer 503 with
/// Retry-After and the JSON body, with one log line naming it, until the catalog is loaded again.
@Suite struct PictureChangeTests {
  /// A copy of the bundled catalog in a folder of its own.
  static func catalogFolder() throws -> (folder: URL, pictures: [String]) {
    let bundled = try Catalog.bundled()
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("innerpeace-photo-\(UUID())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    for name in ["quotes.json", "pictures.json"] + bundled.pictures {
      try FileManager.default.copyItem(
        at: bundled.directory.appendingPathComponent(name), to: folder.appendingPathComponent(name))
    }
    return (folder, bundled.pictures)
  }

  /// `name`'s file replaced by another photo (a new file renamed over it, as deploy tools do).
  static func replace(_ name: String, with other: String, in folder: URL) throws {
    let staged = folder.appendingPathComponent(".staged-\(UUID())")
    try FileManager.default.copyItem(at: folder.appendingPathComponent(other), to: staged)
    guard rename(staged.path, folder.appendingPathComponent(name).path) == 0 else {
      throw RawHTTPError(description: "rename failed")
    }
  }

  @Test(arguments: ["replaced", "rewritten in place"])
  func changedPhotoAnswers503InProcess(how: String) async throws {
    let (folder, pictures) = try Self.catalogFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let catalog = try Catalog(directory: folder)
    let renderer = try CardRenderer(catalog: catalog, backgroundCacheBytes: 0)
    let logs = LogStore()
    let logger = Logger(label: "picture-change-test") { _ in CapturingLogHandler(store: logs) }
    let service = CardService(renderer: renderer, configuration: testConfiguration(cacheMegabytes: 0), logger: logger)
    let app = Application(router: buildRouter(service: service), logger: quietLogger)
    let photo = pictures[0]
    let other = pictures[1]
    do {
      try await app.test(.router) { client in
        let before = try await client.get("/cards/0.png?picture=\(photo)&w=200&h=200")
        expectCard(before, format: "png", size: (200, 200))
        if how == "replaced" {
          try Self.replace(photo, with: other, in: folder)
        } else {
          let handle = try FileHandle(forWritingTo: folder.appendingPathComponent(photo))
          try handle.truncate(atOffset: 0)
          try handle.write(contentsOf: Data(contentsOf: folder.appendingPathComponent(other)))
          try handle.close()
        }
        for size in ["200", "300"] {
          let after = try await client.get("/cards/0.png?picture=\(photo)&w=\(size)&h=200")
          expectError(after, status: 503)
          #expect(after.header("Retry-After") == "60", "\(after)")
        }
        // Other photos are served; the service is still up.
        expectCard(try await client.get("/cards/0.png?picture=\(other)&w=200&h=200"), format: "png")
        #expect(try await client.get("/healthz").status == 200)
      }
    } catch {
      try? await service.shutdown()
      throw error
    }
    try await service.shutdown()
    let lines = logs.lines.filter { $0.contains("changed on disk") }
    #expect(lines.count == 1, "one log line per changed photo: \(logs.lines)")
    #expect(lines.first?.contains(photo) == true, "\(lines)")
  }

  /// With worker processes: the worker that decodes the photo notices (a typed error across the
  /// worker protocol), and a worker started after the change (here, the replacement of one that
  /// trapped) refuses it too, from the time the server started.
  @Test(.timeLimit(.minutes(2)), .tags(.live, .process, .binary))
  func changedPhotoAnswers503FromWorkers() async throws {
    let (folder, pictures) = try Self.catalogFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let trap = "trap-\(UUID().uuidString.prefix(8))"
    let server = try await WorkerServer.start(
      arguments: ["--concurrency", "1", "--catalog", folder.path, "--background-cache-mb", "0"],
      environment: ["INNERPEACE_FAULT_TRAP_TEXT": trap])
    defer { server.stop() }
    let port = try #require(server.port, "no 'listening on' line; stderr: \(server.stderr)")
    func get(_ target: String) async throws -> RawHTTPResponse {
      try await onOwnThread {
        try RawHTTPConnection(port: port, request: "GET \(target) HTTP/1.1").response(timeout: 20)
      }
    }
    let photo = pictures[0]
    let before = try await get("/cards/0.png?picture=\(photo)&w=200&h=200")
    #expect(before.status == 200)
    try Self.replace(photo, with: pictures[1], in: folder)
    let after = try await get("/cards/0.png?picture=\(photo)&w=200&h=200")
    #expect(after.status == 503, "\(after.status) \(after.text)")
    #expect(after.header("retry-after") == "60")
    #expect(after.header("content-type")?.hasPrefix("application/json") == true)
    // The worker traps and is replaced; the new one loads the catalog with the new photo, and
    // still refuses it.
    let trapped = try await get("/card.png?text=\(trap)")
    #expect(trapped.status == 500)
    // The one at start, then the trapped one's replacement.
    _ = try await server.waitForWorkerStarts(2)
    let later = try await get("/cards/0.png?picture=\(photo)&w=300&h=200")
    #expect(later.status == 503, "a worker started after the change: \(later.status) \(later.text)")
    let unchanged = try await get("/cards/0.png?picture=\(pictures[1])&w=200&h=200")
    #expect(unchanged.status == 200)
    let changed = await server.waitForLine(containing: "changed on disk")
    #expect(changed?.contains(photo) == true, "\(server.stderr)")
  }
}
