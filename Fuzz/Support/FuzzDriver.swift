import CFuzzing
import Foundation

/// Runs a fuzz target: under libFuzzer in a FUZZING build (`scripts/fuzz.sh` builds with
/// `-sanitize=fuzzer,address -DFUZZING`), else as a replayer that feeds it each file named on
/// the command line (a folder stands for the files in it), so a crash input or a corpus can be
/// rerun with an ordinary debug build: `swift run FuzzText Fuzz/Corpus/text`.
public enum FuzzDriver {
  /// One input, as libFuzzer passes it; returns 0 (libFuzzer reserves other values).
  public typealias Entry = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

  public static func main(_ entry: Entry) -> Never {
    #if FUZZING
      var argc = CommandLine.argc
      var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
      exit(LLVMFuzzerRunDriver(&argc, &argv, entry))
    #else
      var files: [URL] = []
      for argument in CommandLine.arguments.dropFirst() {
        let url = URL(fileURLWithPath: argument)
        if let names = try? FileManager.default.contentsOfDirectory(atPath: url.path) {
          files += names.sorted().map { url.appendingPathComponent($0) }
        } else {
          files.append(url)
        }
      }
      guard !files.isEmpty else {
        FileHandle.standardError.write(Data("usage: \(CommandLine.arguments[0]) FILE-OR-FOLDER...\n".utf8))
        exit(64)
      }
      for file in files {
        guard let data = FileManager.default.contents(atPath: file.path) else {
          FileHandle.standardError.write(Data("cannot read \(file.path)\n".utf8))
          exit(66)
        }
        let bytes = [UInt8](data)
        _ = bytes.withUnsafeBufferPointer { entry($0.baseAddress, $0.count) }
      }
      print("\(files.count) inputs ran without a crash")
      exit(0)
    #endif
  }
}
