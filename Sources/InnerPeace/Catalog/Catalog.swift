public import Foundation
import InnerPeaceResources

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One quote of the catalog.
public struct Quote: Hashable, Sendable, Codable {
  public let text: String
  public let author: String

  public init(text: String, author: String) {
    self.text = text
    self.author = author
  }

  /// The app's share message: `"<text>" — <author>`.
  public var shareMessage: String { Quote.shareMessage(text: text, author: author) }

  /// The share message for any text; without an author it is the quoted text alone.
  public static func shareMessage(text: String, author: String) -> String {
    author.isEmpty ? "\"\(text)\"" : "\"\(text)\" \u{2014} \(author)"
  }
}

/// How large a catalog may be: past these it is refused at load, so that a catalog never costs
/// more memory or start-up time than these figures (BENCHMARKS.md, "Issue 17").
public enum CatalogLimits {
  /// Most quotes in a catalog.
  public static let maximumQuotes = 100_000
  /// Most pictures in a catalog.
  public static let maximumPictures = 10_000
  /// Largest `quotes.json`, in bytes (64 MiB).
  public static let maximumQuotesFileBytes = 64 << 20
  /// Largest `pictures.json`, in bytes (4 MiB).
  public static let maximumPicturesFileBytes = 4 << 20

  /// The one wording of a catalog past a limit: `count` of `what` where `maximum` are allowed.
  static func overLimit(_ count: Int, _ what: String, maximum: Int) -> String {
    "\(count) \(what) is more than the limit of \(maximum)"
  }
}

/// When a catalog reads and checks its photos.
public enum PictureChecking: Sendable {
  /// Every photo, when the catalog loads: a service or a batch refuses a broken photo before it
  /// starts.
  case atLoad
  /// Each photo when a card draws it, with the same checks and errors; the load checks only the
  /// names. For one card, which draws one photo of the catalog.
  case whenDrawn
}

/// The quotes and background photos a card can use, loaded and checked once.
public struct Catalog: Sendable {
  public let quotes: [Quote]
  /// Picture file names, as listed in `pictures.json`.
  public let pictures: [String]
  /// The folder the pictures are read from.
  public let directory: URL
  /// What each picture's file was when the catalog checked it (``PictureStamp``).
  let pictureStamps: [String: PictureStamp]
  /// Each picture's size as seen and its focus, given in `pictures.json` or estimated at load.
  let pictureDetails: [String: PictureDetail]
  /// When the photos are read and checked.
  public let pictureChecking: PictureChecking
  /// The foci `pictures.json` gives, for photos checked when drawn (``pictureDetails`` is empty).
  let listedFoci: [String: PictureFocus]
  /// A time before the content this catalog stands for was fixed, in nanoseconds since 1970
  /// (`nil`: only the stamps count): a picture whose file status changed after it has changed
  /// since, even if this catalog was loaded after the change. A render worker process, which
  /// loads its own copy of the server's catalog, is given the time the server started, so that a
  /// worker started (or restarted) after a photo was replaced still notices it.
  public var fixedSinceNanoseconds: Int64?

  /// Loads `quotes.json` and `pictures.json` from `directory` and checks every entry: valid JSON
  /// of the right shape, no empty list, no empty quote, and every picture a plain file name whose
  /// file exists and has a JPEG or PNG header. An entry is a file name or an object
  /// `{"file": "x.jpg", "focus": [fx, fy]}`; a picture without a focus has one estimated
  /// (``FocusEstimator``).
  /// - Parameter checking: when the photos are read and checked; `.whenDrawn` checks only their
  ///   names here, and each photo as a card draws it (``checkedPicture(_:)``).
  /// - Throws: ``InnerPeaceError`` naming the file and the problem.
  public init(directory: URL, checking: PictureChecking = .atLoad) throws(InnerPeaceError) {
    self.directory = directory
    self.quotes = try Catalog.loadQuotes(directory.appendingPathComponent("quotes.json"))
    // The pictures after the quotes: a catalog too large is refused before its photos are read.
    let loaded = try Catalog.loadPictures(
      directory.appendingPathComponent("pictures.json"), in: directory, checking: checking)
    self.pictures = loaded.names
    self.pictureStamps = loaded.stamps
    self.pictureDetails = loaded.details
    self.pictureChecking = checking
    self.listedFoci = loaded.listedFoci
  }

  /// A catalog from values, for tests and for callers that keep their own lists.
  /// The pictures are checked as in ``init(directory:)``; those not in `foci` have their focus
  /// estimated.
  public init(quotes: [Quote], pictures: [String], directory: URL, foci: [String: PictureFocus] = [:])
    throws(InnerPeaceError)
  {
    guard !quotes.isEmpty else { throw .catalogInvalid(file: "quotes.json", reason: "the list of quotes is empty") }
    guard !pictures.isEmpty else {
      throw .catalogInvalid(file: "pictures.json", reason: "the list of pictures is empty")
    }
    try Catalog.checkCount(quotes.count, "quotes", maximum: CatalogLimits.maximumQuotes, file: "quotes.json")
    try Catalog.checkCount(pictures.count, "pictures", maximum: CatalogLimits.maximumPictures, file: "pictures.json")
    var stamps: [String: PictureStamp] = [:]
    var details: [String: PictureDetail] = [:]
    for name in pictures {
      let checked = try Catalog.checkPicture(name, in: directory, focus: foci[name])
      (stamps[name], details[name]) = (checked.stamp, checked.detail)
    }
    var checked: [Quote] = []
    for (index, quote) in quotes.enumerated() {
      checked.append(try Catalog.checked(quote, index: index, file: "quotes.json"))
    }
    self.quotes = checked
    self.pictures = pictures
    self.directory = directory
    self.pictureStamps = stamps
    self.pictureDetails = details
    self.pictureChecking = .atLoad
    self.listedFoci = [:]
  }

  /// The focus of a catalog picture (by the name the catalog lists), `nil` for another name; in
  /// a catalog that checks its photos when drawn, `nil` too for a photo whose focus
  /// `pictures.json` does not give (it is estimated when the photo is drawn).
  public func focus(ofPicture name: String) -> PictureFocus? { pictureDetails[name]?.focus ?? listedFoci[name] }

  /// The crop of a catalog picture on a canvas with the text block `block` (``FocusCrop``), from
  /// `detail` or the one checked at load; centred for a name the catalog does not list.
  func crop(for name: String, canvas: (width: Int, height: Int), block: PixelRect?, detail: PictureDetail? = nil)
    -> FocusCrop
  {
    guard let detail = detail ?? pictureDetails[name] else { return .centred }
    return FocusCrop.choose(
      photo: (detail.width, detail.height), canvas: canvas, focus: detail.focus, block: block)
  }

  /// The bundled catalog (`Resources/` of the package).
  /// - Parameter checking: when the photos are read and checked (``init(directory:checking:)``).
  /// - Throws: ``InnerPeaceError/catalogUnreadable(file:reason:)`` if the bundle is missing.
  public static func bundled(checking: PictureChecking = .atLoad) throws(InnerPeaceError) -> Catalog {
    guard let directory = BundledResources.catalogDirectory else {
      throw .catalogUnreadable(
        file: "Resources", reason: "the bundled catalog was not found next to the executable (set INNERPEACE_HOME)")
    }
    return try Catalog(directory: directory, checking: checking)
  }

  /// The quote and picture a seed picks: two draws from ``SeededGenerator``, quote first, so a
  /// request that names one of them keeps the other that its seed would pick.
  public func randomChoice(seed: UInt64) -> (quoteIndex: Int, picture: String) {
    var generator = SeededGenerator(seed: seed)
    let quoteIndex = generator.index(below: quotes.count)
    let pictureIndex = generator.index(below: pictures.count)
    return (quoteIndex, pictures[pictureIndex])
  }

  /// The picture of quote `index`'s card wherever the quote is shown by its index (its card URL,
  /// its page, `/quotes`, the quote of the day and its feeds, `batch`): the pictures in turn as
  /// `pictures.json` lists them, quote `index` on picture `index mod pictures.count`. `offset`
  /// moves every quote that many places further along the list (0: the service's choice). The
  /// rule is part of the content version (``ContentSources/quotePictures``).
  /// - Parameter index: a quote index of this catalog (0 or more).
  public func picture(forQuote index: Int, offset: UInt64 = 0) -> String {
    let count = pictures.count
    return pictures[(index % count + Int(offset % UInt64(count))) % count]
  }

  /// The catalog's own spelling of a picture's name, for a name given in any Unicode
  /// normalization form: `café.jpg` listed in NFC is found as `cafe\u{301}.jpg` (NFD, as macOS
  /// file names and some keyboards spell it) too. The one place picture names are looked up.
  /// - Throws: ``InnerPeaceError/pictureNameInvalid(name:)`` or ``InnerPeaceError/pictureUnknown(name:)``.
  public func pictureName(matching name: String) throws(InnerPeaceError) -> String {
    try Catalog.checkName(name)
    let wanted = name.precomposedStringWithCanonicalMapping
    guard let listed = pictures.first(where: { $0.precomposedStringWithCanonicalMapping == wanted }) else {
      throw .pictureUnknown(name: name)
    }
    return listed
  }

  /// The file path of a catalog picture, for a name that is in the catalog (in any normalization
  /// form, ``pictureName(matching:)``): the file under the name the catalog lists.
  /// - Throws: ``InnerPeaceError/pictureNameInvalid(name:)`` or ``InnerPeaceError/pictureUnknown(name:)``.
  public func pictureURL(named name: String) throws(InnerPeaceError) -> URL {
    directory.appendingPathComponent(try pictureName(matching: name))
  }

  // MARK: Loading

  /// Refuses a count past its limit (``CatalogLimits``).
  static func checkCount(_ count: Int, _ what: String, maximum: Int, file: String) throws(InnerPeaceError) {
    guard count <= maximum else {
      throw .catalogInvalid(file: file, reason: CatalogLimits.overLimit(count, what, maximum: maximum))
    }
  }

  /// A catalog file's bytes, refused unread when it is larger than `maximumBytes`.
  private static func read(_ url: URL, maximumBytes: Int) throws(InnerPeaceError) -> Data {
    // `stat`, not FileManager's attributes, which look up the owner's and group's names.
    var status = stat()
    if stat(url.path, &status) == 0, Int(status.st_size) > maximumBytes {
      throw .catalogInvalid(
        file: url.path, reason: CatalogLimits.overLimit(Int(status.st_size), "bytes", maximum: maximumBytes))
    }
    do {
      let data = try Data(contentsOf: url)
      // A file that grew since it was measured.
      guard data.count <= maximumBytes else {
        throw InnerPeaceError.catalogInvalid(
          file: url.path, reason: CatalogLimits.overLimit(data.count, "bytes", maximum: maximumBytes))
      }
      return data
    } catch let error as InnerPeaceError {
      throw error
    } catch {
      let reason = FileManager.default.fileExists(atPath: url.path) ? "permission denied or unreadable" : "no such file"
      throw .catalogUnreadable(file: url.path, reason: reason)
    }
  }

  /// Decodes a catalog file: a JSON array whose entries are decoded one by one with
  /// `JSONDecoder`, each kept with its decoding error (if any), so that entries are checked in
  /// file order, shape and content together. Malformed JSON and duplicated keys (which Foundation
  /// would resolve silently, dropping one of the two values) are errors with a line and column;
  /// the syntax is checked with `JSONSerialization` first, which says where it fails (and refuses
  /// what `JSONDecoder` lets pass in values it skips, such as a number with a leading zero).
  /// A file with more entries than `limit` allows is refused before it is parsed: parsing costs
  /// about fifty times the file's size in memory.
  /// - Returns: The entries, or `nil` when the file holds valid JSON that is not an array.
  private static func decodeEntries<Value: Decodable>(
    of type: Value.Type, from original: Data, file: String, limit: (count: Int, noun: String)
  ) throws(InnerPeaceError) -> [CatalogEntry<Value>]? {
    guard let data = JSONPosition.utf8(original) else {
      throw .catalogMalformed(
        file: file, line: 1, column: 1, reason: "the file is UTF-16 or UTF-32 that does not decode")
    }
    let bytes = [UInt8](data)
    if let count = JSONPosition.topLevelArrayCount(in: bytes) {
      try checkCount(count, limit.noun, maximum: limit.count, file: file)
    }
    if let problem = JSONPosition.syntaxError(in: data) ?? JSONPosition.firstDuplicateKey(in: bytes) {
      let (line, column) = JSONPosition.lineAndColumn(of: problem.offset, in: bytes)
      throw .catalogMalformed(file: file, line: line, column: column, reason: problem.reason)
    }
    do {
      return try JSONDecoder().decode([CatalogEntry<Value>].self, from: data)
    } catch DecodingError.dataCorrupted(let context) {
      let (line, column) = JSONPosition.lineAndColumn(of: bytes.count, in: bytes)
      throw .catalogMalformed(file: file, line: line, column: column, reason: context.debugDescription)
    } catch {
      return nil
    }
  }

  static func loadQuotes(_ url: URL) throws(InnerPeaceError) -> [Quote] {
    try quotes(fromJSON: read(url, maximumBytes: CatalogLimits.maximumQuotesFileBytes), file: url)
  }

  /// The quotes of a `quotes.json` already read; `file` names it in errors.
  static func quotes(fromJSON data: Data, file url: URL) throws(InnerPeaceError) -> [Quote] {
    let file = url.path
    guard
      let entries = try decodeEntries(
        of: Quote.self, from: data, file: file, limit: (CatalogLimits.maximumQuotes, "quotes"))
    else {
      throw .catalogInvalid(file: file, reason: "expected a JSON array of {\"text\", \"author\"} objects")
    }
    guard !entries.isEmpty else { throw .catalogInvalid(file: file, reason: "the list of quotes is empty") }
    try checkCount(entries.count, "quotes", maximum: CatalogLimits.maximumQuotes, file: file)
    var quotes: [Quote] = []
    quotes.reserveCapacity(entries.count)
    for (index, entry) in entries.enumerated() {
      let quote: Quote
      switch entry.value {
      case .success(let value): quote = value
      case .failure(let error): throw .catalogInvalid(file: file, reason: quoteShapeProblem(error, index: index))
      }
      quotes.append(try checked(quote, index: index, file: file))
    }
    return quotes
  }

  /// A quote with its text and author tidied by ``TextRules``.
  /// - Throws: ``InnerPeaceError/catalogInvalid(file:reason:)`` naming the quote and the rule.
  private static func checked(_ quote: Quote, index: Int, file: String) throws(InnerPeaceError) -> Quote {
    do {
      return Quote(text: try TextRules.quote(quote.text), author: try TextRules.author(quote.author))
    } catch {
      throw .catalogInvalid(file: file, reason: "quote \(index): \(error.description)")
    }
  }

  /// What is wrong with the shape of quote `index`, from the error that decoding it threw.
  private static func quoteShapeProblem(_ error: DecodingError, index: Int) -> String {
    switch error {
    case .keyNotFound(let key, _):
      return "quote \(index) has no \"\(key.stringValue)\" field"
    case .typeMismatch(_, let context), .valueNotFound(_, let context):
      // The path is [index] when the entry itself is wrong, [index, field] for a field.
      guard context.codingPath.count > 1, let field = context.codingPath.last else {
        return "quote \(index) is not an object"
      }
      return "quote \(index): \"\(field.stringValue)\" is not a string"
    case .dataCorrupted(let context):
      return "quote \(index): \(context.debugDescription)"
    @unknown default:
      return "quote \(index): \(error)"
    }
  }

  /// A checked `pictures.json`: the names in order, each picture's stamp and detail (photos
  /// checked at load), and the foci the file gives (photos checked when drawn).
  typealias LoadedPictures = (
    names: [String], stamps: [String: PictureStamp], details: [String: PictureDetail],
    listedFoci: [String: PictureFocus]
  )

  static func loadPictures(_ url: URL, in directory: URL, checking: PictureChecking = .atLoad)
    throws(InnerPeaceError) -> LoadedPictures
  {
    try pictures(
      fromJSON: read(url, maximumBytes: CatalogLimits.maximumPicturesFileBytes), file: url, in: directory,
      checking: checking)
  }

  /// The pictures of a `pictures.json` already read, each checked in `directory` (only its name
  /// when `checking` is `.whenDrawn`); `file` names it in errors.
  static func pictures(fromJSON data: Data, file url: URL, in directory: URL, checking: PictureChecking = .atLoad)
    throws(InnerPeaceError) -> LoadedPictures
  {
    let file = url.path
    guard
      let entries = try decodeEntries(
        of: PictureListing.self, from: data, file: file, limit: (CatalogLimits.maximumPictures, "pictures"))
    else {
      throw .catalogInvalid(
        file: file, reason: "expected a JSON array of picture file names or {\"file\", \"focus\"} objects")
    }
    guard !entries.isEmpty else { throw .catalogInvalid(file: file, reason: "the list of pictures is empty") }
    try checkCount(entries.count, "pictures", maximum: CatalogLimits.maximumPictures, file: file)
    var names: [String] = []
    var stamps: [String: PictureStamp] = [:]
    var details: [String: PictureDetail] = [:]
    var listedFoci: [String: PictureFocus] = [:]
    for (index, entry) in entries.enumerated() {
      let listing: PictureListing
      switch entry.value {
      case .success(let value): listing = value
      case .failure(.dataCorrupted(let context)):
        throw .catalogInvalid(file: file, reason: "picture \(index) \(context.debugDescription)")
      case .failure:
        throw .catalogInvalid(file: file, reason: "picture \(index) is not a string")
      }
      switch checking {
      case .atLoad:
        let checked = try checkPicture(listing.file, in: directory, focus: listing.focus)
        (stamps[listing.file], details[listing.file]) = (checked.stamp, checked.detail)
      case .whenDrawn:
        try checkName(listing.file)
        listedFoci[listing.file] = listing.focus
      }
      names.append(listing.file)
    }
    return (names, stamps, details, listedFoci)
  }

  static func checkName(_ name: String) throws(InnerPeaceError) {
    guard !name.isEmpty, !name.contains("/"), !name.contains("\\"), !name.hasPrefix("."), !name.contains("\0")
    else { throw .pictureNameInvalid(name: name) }
  }

  /// Checks a picture's name, that it is a regular file within the size limit, and that the
  /// whole file is a JPEG or PNG that can be drawn: its structure walks to the end, its size is
  /// within ``Limits``, its colour space can be decoded. Decodes no pixels when `focus` is given;
  /// without it, decodes a small copy to estimate the focus (``FocusEstimator``; the centre when
  /// that decode fails, which the card that decodes the photo then reports).
  /// - Returns: the bytes, the file's status as they were read (``PictureStamp``), its size as
  ///   seen and focus.
  @discardableResult
  static func checkPicture(_ name: String, in directory: URL, focus: PictureFocus? = nil) throws(InnerPeaceError)
    -> (bytes: [UInt8], stamp: PictureStamp, detail: PictureDetail)
  {
    try checkName(name)
    let (bytes, stamp) = try PictureFile.readStamped(atPath: directory.appendingPathComponent(name).path, name: name)
    let header: ImageDecoding.Header
    switch ImageDecoding.inspect(bytes) {
    case .success(let checked): header = checked
    case .failure(let failure): throw .pictureUndecodable(name: name, reason: failure.reason)
    }
    // A photo whose pixels do not decode keeps its load-time behaviour: it fails when a card
    // decodes it, naming it; its focus meanwhile is the centre.
    let chosen =
      focus ?? (try? FocusEstimator.estimate(bytes)) ?? PictureFocus(x: 0.5, y: 0.5, estimated: true)
    return (bytes, stamp, PictureDetail(width: header.width, height: header.height, focus: chosen))
  }

  /// A photo of a catalog that checks its photos when drawn (``PictureChecking/whenDrawn``), read
  /// and checked as a catalog checking at load would check it (``checkPicture(_:in:focus:)``,
  /// the same errors), and refused if its status changed after ``fixedSinceNanoseconds``.
  /// - Parameter name: a picture name as this catalog lists it.
  /// - Returns: the bytes to decode, and the photo's size as seen and focus.
  func checkedPicture(_ name: String) throws(InnerPeaceError) -> (bytes: [UInt8], detail: PictureDetail) {
    let checked = try Catalog.checkPicture(name, in: directory, focus: listedFoci[name])
    try checkUnchanged(name, checked.stamp)
    return (checked.bytes, checked.detail)
  }

  /// The bytes of a catalog picture, read again as at load: the file may have been swapped for a
  /// FIFO or a bigger file since, or replaced, and its bytes are then not those the content
  /// version stands for (``checkUnchanged(_:_:)``).
  func readPicture(_ name: String) throws(InnerPeaceError) -> [UInt8] {
    let url = try pictureURL(named: name)
    let (bytes, stamp) = try PictureFile.readStamped(atPath: url.path, name: name)
    try checkUnchanged(name, stamp)
    return bytes
  }

  /// Refuses a picture whose file, as just read (`stamp`), is not the one this catalog checked:
  /// another file, written since, or with a status changed after ``fixedSinceNanoseconds``.
  /// - Throws: ``InnerPeaceError/pictureChanged(name:)``.
  func checkUnchanged(_ name: String, _ stamp: PictureStamp) throws(InnerPeaceError) {
    if let recorded = pictureStamps[name], !recorded.isSameFile(as: stamp) { throw .pictureChanged(name: name) }
    if let since = fixedSinceNanoseconds, stamp.changedNanoseconds > since { throw .pictureChanged(name: name) }
  }

}

/// One entry of a catalog file's array: its value, or the error that decoding it threw (kept
/// rather than thrown, so that the caller reports the first problem in file order).
private struct CatalogEntry<Value: Decodable>: Decodable {
  let value: Result<Value, DecodingError>

  init(from decoder: any Decoder) throws {
    do {
      value = .success(try Value(from: decoder))
    } catch let error as DecodingError {
      value = .failure(error)
    }
  }
}
