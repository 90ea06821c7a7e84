import Foundation
import Hummingbird
import HummingbirdTesting
import InnerPeace
import InnerPeaceServer
import Testing

@Suite struct HealthTests {
  @Test func healthzAnswersOK() async throws {
    let renderer = try CardRenderer(catalog: try Catalog.bundled())
    let service = CardService(renderer: renderer, configuration: ServerConfiguration())
    let app = Application(router: buildRouter(service: service))
    try await app.test(.router) { client in
      try await client.execute(uri: "/healthz", method: .get) { response in
        #expect(response.status == .ok)
        let body = String(buffer: response.body)
        #expect(body.contains("\"status\":\"ok\""))
      }
    }
    try await service.shutdown()
  }
}
