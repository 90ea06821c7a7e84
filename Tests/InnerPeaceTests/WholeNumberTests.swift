import InnerPeace
import Testing

/// The one grammar of whole numbers (``WholeNumber``), shared by the command line and the service.
@Suite struct WholeNumberTests {
  @Test(arguments: ["0", "7", "10", "4096", "9223372036854775807"])
  func plainDecimalsParse(text: String) throws {
    let number = try #require(WholeNumber(text))
    #expect(number.description == text)
  }

  @Test(arguments: ["", "+5", "-1", "05", "00", " 5", "5 ", "5.0", "1e3", "0x10", "５", "٣", "½", "5\u{0}"])
  func anythingElseIsRefused(text: String) {
    #expect(WholeNumber(text) == nil, "\(text.debugDescription)")
    #expect(WholeNumber.exact(text, as: UInt64.self) == nil, "\(text.debugDescription)")
  }

  @Test func tooManyDigitsIsTheLargestValue() {
    #expect(WholeNumber("99999999999999999999")?.value == Int.max)
    #expect(WholeNumber.exact("18446744073709551615", as: UInt64.self) == UInt64.max)
    #expect(WholeNumber.exact("18446744073709551616", as: UInt64.self) == nil)
  }
}
