import Foundation
import InnerPeace
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOExtras
import NIOPosix
import Testing

@testable import InnerPeaceServer

#if canImport(Glibc)
  import Glibc
#endif

/// The frames between the server and its render worker processes.
@Suite struct WorkerWireTests {
  /// A request written to a worker's channel that has closed already (the worker died before its
  /// channel was registered: a worker that fails at start) fails its answer at once, instead of
  /// leaving it to the deadline. The write never reaches `RequestResponseHandler`, so before this
  /// the answer's promise was never completed: with the tests' manual clock the start-up waited
  /// for ever (CI's hang in `idleWorkerDeathIsSeenWithoutARequest`), in the server for the whole
  /// start-up timeout.
  @Test func requestToAClosedChannelFailsAtOnce() async throws {
    var pair: [Int32] = [-1, -1]
    try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
    close(pair[1])  // the worker is gone before its channel is registered
    let channel = try await NIOPipeBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .channelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
          try channel.pipeline.syncOperations.addHandler(RequestResponseHandler<ByteBuffer, ByteBuffer>())
        }
      }
      .takingOwnershipOfDescriptor(inputOutput: pair[0]).get()
    try await channel.closeFuture.get()  // it read the end of the stream and closed
    let (answer, written) = WorkerConnection.send(ByteBuffer(string: "hello"), on: channel)
    let outcomes = NIOLockedValueBox<(written: Bool?, answered: Bool?)>((nil, nil))
    written.whenComplete { result in outcomes.withLockedValue { $0.written = (try? result.get()) != nil } }
    answer.whenComplete { result in outcomes.withLockedValue { $0.answered = (try? result.get()) != nil } }
    // The event loop runs its tasks in order: once this one has run, the write has failed.
    try await channel.eventLoop.submit {}.get()
    #expect(outcomes.withLockedValue { $0.written } == false, "the write fails")
    // Without the tie to the write, the answer was never completed: a wait on it never ended.
    #expect(outcomes.withLockedValue { $0.answered } == false, "and so does the answer, at once")
  }

  /// On an open channel the answer is the worker's frame.
  @Test func requestOnAnOpenChannelGetsItsAnswer() throws {
    let channel = EmbeddedChannel(handler: RequestResponseHandler<ByteBuffer, ByteBuffer>())
    let (answer, written) = WorkerConnection.send(ByteBuffer(string: "hello"), on: channel)
    try written.wait()
    #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "hello"))
    try channel.writeInbound(ByteBuffer(string: "ready"))
    #expect(try answer.wait() == ByteBuffer(string: "ready"))
    _ = try channel.finish()
  }

  /// A frame through its bytes and back, as the server's channel reads it.
  static func roundTrip(_ frame: WorkerFrame) throws -> WorkerFrame {
    try WorkerFrame(decoding: frame.encoded())
  }

  @Test(arguments: [
    CardRequest(seed: 7),
    CardRequest(
      preset: .story, quote: .index(12), picture: .named("aqua.jpg"), seed: .max, format: .webp, showsAuthor: false,
      alignment: .center, transparent: true),
    CardRequest(
      preset: .custom(try! CanvasSize(width: 1600, height: 900)), quote: .text("Breathe — ünïcödé 🌿", author: nil),
      seed: 0, format: .jpeg),
    CardRequest(preset: .classic, quote: .text("x", author: ""), seed: 1 << 63),
    CardRequest(quote: .text("it's \"x\" -- y...", author: "O'Brien"), seed: 2, typographicPunctuation: false),
    CardRequest(quote: .text("平和", author: nil), seed: 3, includesReport: true, language: LanguageTag("zh-Hant-TW")),
    CardRequest(seed: 4, quality: 37),
  ])
  func requestsRoundTrip(_ request: CardRequest) throws {
    let back = try Self.roundTrip(WorkerFrame(.render(request)))
    guard case .render(let decoded) = back.header.message else {
      Issue.record("not a render request: \(back.header.message)")
      return
    }
    #expect(decoded == request)
  }

  /// The preset travels typed: a size out of limits is refused, not re-parsed leniently.
  @Test func presetTravelsTyped() throws {
    let header = String(
      decoding: WorkerFrame.encodedHeader(WorkerWireHeader(.render(CardRequest(seed: 1)))), as: UTF8.self)
    #expect(header.contains(#""og":{}"#), "\(header)")
    let oversized = header.replacingOccurrences(of: #""og":{}"#, with: #""custom":{"_0":{"width":99999,"height":9}}"#)
    var buffer = ByteBuffer()
    buffer.writeInteger(UInt32(oversized.utf8.count))
    buffer.writeString(oversized)
    #expect(throws: WorkerWireError.self) { try WorkerFrame(decoding: buffer) }
  }

  /// Every render error crosses the wire as it is (the batch and schedule rules are not a
  /// render's and have types of their own).
  @Test func everyErrorRoundTrips() throws {
    let errors: [InnerPeaceError] = [
      .catalogUnreadable(file: "q.json", reason: "r"), .catalogMalformed(file: "q", line: 3, column: 9, reason: "r"),
      .catalogInvalid(file: "p", reason: "r"), .pictureMissing(name: "a"), .pictureNameInvalid(name: "../a"),
      .pictureUnknown(name: "b"), .pictureUndecodable(name: "c", reason: "r"), .pictureChanged(name: "d"),
      .decodingFailed(reason: "d"), .quoteIndexOutOfRange(index: -4, count: 50), .textInvalid(reason: "t"),
      .authorInvalid(reason: "a"), .presetUnknown("p"), .sizeInvalid(reason: "s"), .formatUnknown("gif"),
      .transparencyUnsupported(format: .jpeg), .fontsUnavailable(reason: "f"), .renderFailed(reason: "x"),
      .encodingFailed(format: .webp, reason: "e"),
    ]
    for error in errors {
      let back = try Self.roundTrip(WorkerFrame(.failure(error, restingBytes: 1 << 40)))
      guard case .failure(let decoded, let resting) = back.header.message else {
        Issue.record("not a failure: \(back.header.message)")
        continue
      }
      #expect(decoded == error)
      #expect(resting == 1 << 40)
    }
  }

  @Test func cardFactsRoundTrip() throws {
    let report = TypesetReport(
      width: 1200, height: 630, preset: "og", quoteSize: 88, authorSize: 40, truncated: true, lines: ["Calm"],
      authorLines: ["— Anon"], runs: [])
    let card = RenderedCard(
      bytes: [1, 2, 3], format: .png, size: try CanvasSize(width: 1200, height: 630), quoteIndex: 4,
      quote: Quote(text: "Calm", author: "Anon"), picture: nil, shareMessage: "\"Calm\" — Anon", fontSize: 88,
      truncated: true, layoutPasses: 9, timings: StageTimings(), missingGlyphs: 3, report: report)
    let back = try Self.roundTrip(
      WorkerFrame(.card(CardFacts(card), restingBytes: 5), body: ByteBuffer(bytes: card.bytes)))
    guard case .card(let facts, let resting) = back.header.message else {
      Issue.record("not a card: \(back.header.message)")
      return
    }
    #expect(facts == CardFacts(card))
    #expect(facts.quoteIndex == 4 && facts.picture == nil && facts.fontSize == 88 && facts.truncated)
    #expect(facts.missingGlyphs == 3 && facts.shareMessage == card.shareMessage && facts.report == report)
    #expect(resting == 5)
    #expect(Array(back.body.readableBytesView) == card.bytes)
  }

  /// A header of another wire version is refused, by the server and by the worker (both read
  /// frames with this decoder); so is a cut or garbled frame.
  @Test func otherVersionsAndBadFramesAreRefused() throws {
    for version in [1, WorkerWireHeader.currentVersion + 1] {
      let frame = WorkerFrame(header: WorkerWireHeader(.hello, version: version), body: ByteBuffer())
      #expect(throws: WorkerWireError.versionMismatch(received: version)) { try Self.roundTrip(frame) }
    }
    #expect(WorkerWireError.versionMismatch(received: 1).description.contains("wire version 1"))
    var good = WorkerFrame(.render(CardRequest(seed: 1))).encoded()
    let cut = good.getSlice(at: 0, length: good.readableBytes - 1)!
    #expect(throws: WorkerWireError.self) { try WorkerFrame(decoding: cut) }
    good.setInteger(UInt8(ascii: "!"), at: 4)
    let garbled = good
    #expect(throws: WorkerWireError.self) { try WorkerFrame(decoding: garbled) }
  }

  /// The worker's blocking frames and the server's NIO codecs agree: a card with a large body
  /// written by the worker's side is one frame to the server's length-field decoder, and a request
  /// framed by the server's prepender is read whole by the worker's side.
  @Test func bothSidesFrameAlike() throws {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("innerpeace-frames-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: file) }
    let descriptor = open(file.path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
    #expect(descriptor >= 0)
    defer { close(descriptor) }
    let body = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    let facts = CardFacts(
      RenderedCard(
        bytes: [], format: .webp, size: try CanvasSize(width: 1080, height: 1080), quoteIndex: nil,
        quote: Quote(text: "t", author: ""), picture: "aqua.jpg", shareMessage: "\"t\"", fontSize: 50,
        truncated: false, layoutPasses: 1, timings: StageTimings()))
    try BlockingFrameStream(input: -1, output: descriptor).send(.card(facts, restingBytes: 7), body: body)

    let server = EmbeddedChannel()
    try server.pipeline.syncOperations.addHandlers(
      ByteToMessageHandler(LengthFieldBasedFrameDecoder(lengthFieldBitLength: .fourBytes)),
      LengthFieldPrepender(lengthFieldBitLength: .fourBytes))
    let written = try Data(contentsOf: file)
    // In two pieces, as a socket may deliver it.
    try server.writeInbound(ByteBuffer(bytes: written.prefix(100_000)))
    #expect(try server.readInbound(as: ByteBuffer.self) == nil)
    try server.writeInbound(ByteBuffer(bytes: written.dropFirst(100_000)))
    let frame = try WorkerFrame(decoding: try #require(try server.readInbound(as: ByteBuffer.self)))
    guard case .card(let decoded, 7) = frame.header.message else {
      Issue.record("not the card: \(frame.header.message)")
      return
    }
    #expect(decoded == facts)
    #expect(Array(frame.body.readableBytesView) == body)

    let request = CardRequest(preset: .square, quote: .index(3), seed: 9)
    try server.writeOutbound(WorkerFrame(.render(request)).encoded())
    var outbound = ByteBuffer()
    while let piece = try server.readOutbound(as: ByteBuffer.self) { outbound.writeImmutableBuffer(piece) }
    #expect(ftruncate(descriptor, 0) == 0 && lseek(descriptor, 0, SEEK_SET) == 0)
    let bytes = Array(outbound.readableBytesView)
    #expect(bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == bytes.count)
    #expect(lseek(descriptor, 0, SEEK_SET) == 0)
    let reader = BlockingFrameStream(input: descriptor, output: -1)
    guard case .render(let received) = try reader.receive()?.message else {
      Issue.record("not the request")
      return
    }
    #expect(received == request)
    #expect(try reader.receive() == nil, "the end of the stream between frames")
    _ = try server.finish()
  }
}

/// How many threads encode a worker's PNG card, and how the count travels.
@Suite struct EncoderThreadsTests {
  /// Two threads while each render in flight can have two cores, else one.
  @Test func twoWhileACoreWouldSitIdle() {
    let rule = WorkerPool<ContinuousClock>.encoderThreads(rendersInFlight:cores:)
    #expect(rule(1, 2) == 2)
    #expect(rule(2, 2) == 1)
    #expect(rule(1, 1) == 1)
    #expect(rule(2, 4) == 2)
    #expect(rule(3, 4) == 1)
    #expect(rule(16, 16) == 1)
  }

  /// The count is in the render's header (absent for one thread), and the worker reads it back.
  @Test func theCountTravelsInTheRenderHeader() throws {
    let request = CardRequest(preset: .og, quote: .index(1), seed: 2)
    let two = try WorkerWireTests.roundTrip(WorkerFrame(.render(request), encoderThreads: 2))
    #expect(two.header.encoderThreads == 2)
    let one = WorkerFrame(.render(request))
    #expect(try WorkerWireTests.roundTrip(one).header.encoderThreads == nil)
    let json = String(decoding: WorkerFrame.encodedHeader(one.header), as: UTF8.self)
    #expect(!json.contains("encoderThreads"), "\(json)")
  }
}

/// A card left in the worker's body file (``WorkerBodyFile``) instead of the socket.
@Suite struct WorkerBodyFileTests {
  static func card(_ body: [UInt8], through stream: BlockingFrameStream, frames descriptor: Int32) throws -> WorkerFrame
  {
    #expect(ftruncate(descriptor, 0) == 0 && lseek(descriptor, 0, SEEK_SET) == 0)
    let facts = CardFacts(
      RenderedCard(
        bytes: [], format: .png, size: try CanvasSize(width: 1200, height: 630), quoteIndex: 2,
        quote: Quote(text: "t", author: ""), picture: "aqua.jpg", shareMessage: "\"t\"", fontSize: 50,
        truncated: false, layoutPasses: 1, timings: StageTimings()))
    try stream.send(.card(facts, restingBytes: 5), body: body)
    #expect(lseek(descriptor, 0, SEEK_SET) == 0)
    var framed = [UInt8](repeating: 0, count: 1 << 24)
    let count = framed.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    let server = EmbeddedChannel()
    try server.pipeline.syncOperations.addHandler(
      ByteToMessageHandler(LengthFieldBasedFrameDecoder(lengthFieldBitLength: .fourBytes)))
    try server.writeInbound(ByteBuffer(bytes: framed.prefix(max(0, count))))
    let frame = try WorkerFrame(decoding: try #require(try server.readInbound(as: ByteBuffer.self)))
    _ = try server.finish()
    guard case .card(let decoded, 5) = frame.header.message else {
      Issue.record("not the card: \(frame.header.message)")
      return frame
    }
    #expect(decoded == facts)
    return frame
  }

  /// A card goes into the file and its frame carries only the header, which says how many bytes
  /// the file holds; the server reads exactly those, also after a larger card left more in the
  /// file. A card over the limit, or from a worker without a file, crosses the socket as before.
  @Test func cardsCrossTheFileAndLargeOnesTheSocket() throws {
    let bodyFile = try #require(WorkerBodyFile.create(), "memfd_create")
    defer { close(bodyFile) }
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("innerpeace-frames-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: file) }
    let frames = open(file.path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
    try #require(frames >= 0)
    defer { close(frames) }
    let stream = BlockingFrameStream(input: -1, output: frames, bodyFile: bodyFile)

    let large = (0..<2_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
    let small = (0..<300_001).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    for body in [large, small] {
      let frame = try Self.card(body, through: stream, frames: frames)
      #expect(frame.header.bodyInFile == body.count)
      #expect(frame.body.readableBytes == 0, "the frame has no body")
      let read = try WorkerBodyFile.read(body.count, from: bodyFile, allocator: ByteBufferAllocator())
      #expect(Array(read.readableBytesView) == body)
    }

    let overLimit = [UInt8](repeating: 9, count: WorkerBodyFile.limit + 1)
    let inline = try Self.card(overLimit, through: stream, frames: frames)
    #expect(inline.header.bodyInFile == nil)
    #expect(Array(inline.body.readableBytesView) == overLimit)

    let withoutFile = try Self.card(small, through: BlockingFrameStream(input: -1, output: frames), frames: frames)
    #expect(withoutFile.header.bodyInFile == nil)
    #expect(Array(withoutFile.body.readableBytesView) == small)
  }

  /// A header that claims more than the file holds, a length out of bounds, or a file the worker
  /// was not given is a malformed frame (the server then kills the worker).
  @Test func claimsTheFileCannotBackAreRefused() throws {
    let bodyFile = try #require(WorkerBodyFile.create(), "memfd_create")
    defer { close(bodyFile) }
    #expect(WorkerBodyFile.write([1, 2, 3, 4, 5], to: bodyFile))
    let allocator = ByteBufferAllocator()
    #expect(
      Array(try WorkerBodyFile.read(5, from: bodyFile, allocator: allocator).readableBytesView) == [1, 2, 3, 4, 5])
    for (count, descriptor) in [
      (6, bodyFile), (0, bodyFile), (-1, bodyFile), (WorkerBodyFile.limit + 1, bodyFile), (5, nil),
    ] {
      #expect(throws: WorkerWireError.self, "\(count) bytes from \(descriptor.map(String.init) ?? "no file")") {
        _ = try WorkerBodyFile.read(count, from: descriptor, allocator: allocator)
      }
    }
  }
}

/// The wait for a worker's answer against its deadline, when the two come at the same moment.
@Suite struct WorkerAnswerDeadlineTests {
  /// When the deadline comes first, the wait ends only after `onTimeout` has run: the caller then
  /// kills and reaps the worker itself, and an `onTimeout` still to run would signal a process
  /// that is gone (or a new one with its id). Here `onTimeout` fails the answer first, then keeps
  /// its thread busy for a few milliseconds (200,000 checks of a flag the test sets once it has
  /// looked) before it finishes. Before the fix the wait returned as soon as the answer failed,
  /// with `onTimeout` unfinished, in every round.
  @Test func deadlineEndsTheWaitOnlyAfterOnTimeoutRan() async throws {
    let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
    for _ in 0..<3 {
      let clock = ManualClock()
      let answer = eventLoop.makePromise(of: Int.self)
      let progress = NIOLockedValueBox((finished: false, looked: false))
      async let outcome = WorkerConnection.wait(for: answer.futureResult, timeout: .seconds(1), clock: clock) {
        answer.fail(ChannelError.ioOnClosedChannel)
        for _ in 0..<200_000 where !progress.withLockedValue({ $0.looked }) {}
        progress.withLockedValue { $0.finished = true }
      }
      await clock.waitForSleeper(until: .init(offset: .seconds(1)))
      clock.advance(by: .seconds(1))
      let ended = await outcome
      let finished = progress.withLockedValue { progress in
        progress.looked = true
        return progress.finished
      }
      #expect(ended == nil, "the deadline came first")
      #expect(finished, "the wait ended before onTimeout had finished")
    }
  }

  /// An answer completed on an event loop's thread while the deadline fires on another: every wait
  /// ends with exactly one of the two (the answer, or `nil` after `onTimeout` ran once), and ends
  /// only once the answer's future has completed. Under ThreadSanitizer (the test command's TSan
  /// run) this is the hand-off that CI once reported as a data race.
  @Test func answerAndDeadlineRacing() async throws {
    let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
    for round in 0..<500 {
      let clock = ManualClock()
      let answer = eventLoop.makePromise(of: Int.self)
      let timeouts = NIOLockedValueBox(0)
      // The answer comes from the loop's thread, the deadline from this test's task, both now.
      eventLoop.execute { answer.succeed(round) }
      async let outcome = WorkerConnection.wait(for: answer.futureResult, timeout: .seconds(1), clock: clock) {
        timeouts.withLockedValue { $0 += 1 }
        answer.fail(ChannelError.ioOnClosedChannel)  // what closing the worker's channel does
      }
      // A varying head start for the deadline's sleep: none, or a few turns of the executor. A
      // deadline whose sleep starts after the advance never fires, and the answer ends the wait.
      for _ in 0..<(round % 4) { await Task.yield() }
      clock.advance(by: .seconds(1))
      switch await outcome {
      case nil: #expect(timeouts.withLockedValue { $0 } == 1)
      case .success(let value):
        #expect(value == round)
        #expect(timeouts.withLockedValue { $0 } == 0)
      case .failure(let error): Issue.record("round \(round): \(error)")
      }
    }
  }
}
