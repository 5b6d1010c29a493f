import CHolders
import XCTest

@testable import DeallocTrace

/// The recorder writes a `holders` record's HOLDERS-VALUE from the scanner's answer (data)
/// with the compact writer, and the C writers (the census's `growing`) write it from the
/// same data in C: the two must spell every answer byte for byte alike, the names that are
/// no valid UTF-8 or hold controls included.
final class HoldersValueTests: XCTestCase {
  /// Memory of the hand-made answers, freed after each test.
  private var allocations: [UnsafeMutableRawPointer] = []

  override func tearDown() {
    for memory in allocations { memory.deallocate() }
    allocations = []
    super.tearDown()
  }

  private func text(_ bytes: [UInt8]) -> cholders_text {
    let memory = UnsafeMutableRawPointer.allocate(byteCount: max(1, bytes.count), alignment: 1)
    allocations.append(memory)
    bytes.withUnsafeBytes { memory.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
    return cholders_text(bytes: memory.assumingMemoryBound(to: CChar.self), length: bytes.count)
  }

  private func text(_ string: String) -> cholders_text { text(Array(string.utf8)) }

  private func array<Element>(_ elements: [Element]) -> UnsafePointer<Element>? {
    guard !elements.isEmpty else { return nil }
    let memory = UnsafeMutablePointer<Element>.allocate(capacity: elements.count)
    memory.initialize(from: elements, count: elements.count)
    allocations.append(UnsafeMutableRawPointer(memory))
    return UnsafePointer(memory)
  }

  private func root(
    _ kind: Int, tid: Int64 = -1, symbol: cholders_text? = nil, offset: UInt = 0,
    module: cholders_text? = nil
  ) -> cholders_root {
    cholders_root(
      kind: Int32(kind), tid: tid, has_symbol: symbol == nil ? 0 : 1,
      symbol: symbol ?? text(""), offset: offset, module: module ?? text(""))
  }

  private func step(
    _ type: cholders_text, object: UInt, offset: UInt32, kind: Int = Int(CHOLDERS_STEP_UNNAMED),
    field: cholders_text? = nil, element: Int64 = 0, count: Int64 = 0,
    captures: [cholders_text] = [], more: Int64 = 0
  ) -> cholders_step {
    cholders_step(
      type: type, object: object, offset: offset, kind: Int32(kind), field: field ?? text(""),
      element: element, count: count, capture_count: captures.count, captures: array(captures),
      more_captures: more)
  }

  private func path(_ root: cholders_root, _ steps: [cholders_step]) -> cholders_path {
    cholders_path(root: root, step_count: steps.count, steps: array(steps))
  }

  private func answer(
    _ paths: [cholders_path], direct: UInt64, more: UInt64, surplus: UInt64 = 0
  ) -> cholders_holders {
    cholders_holders(
      found: 1, direct: direct, more: more, surplus: surplus, scan_us: 4_321,
      path_count: paths.count, paths: array(paths))
  }

  /// The C writer's text of `answer`.
  private func cText(_ answer: cholders_holders) throws -> [UInt8] {
    let json = try XCTUnwrap(withUnsafePointer(to: answer) { cholders_holders_json($0) })
    defer { cholders_free(json) }
    return Array(UnsafeRawBufferPointer(start: json, count: strlen(json)))
  }

  private func assertWrittenAlike(
    _ answer: cholders_holders, _ message: String = "", file: StaticString = #filePath,
    line: UInt = #line
  ) throws {
    let expected = try cText(answer)
    let value = HoldersValue(answer)
    assertSameBytes(Array((value?.json ?? "null").utf8), expected, message, file: file, line: line)
    guard let value else { return }
    // In a record: as the scanner's text pasted into the line used to be.
    var pasted = JSONLine()
    pasted.begin("holders")
    pasted.field("why", "end")
    pasted.members(ofObject: String(decoding: expected, as: UTF8.self))
    pasted.end()
    var written = JSONLine()
    written.begin("holders")
    written.field("why", "end")
    value.writeMembers(into: &written)
    written.end()
    assertSameBytes(written.bytes, pasted.bytes, message, file: file, line: line)
  }

  /// Bytes compared as bytes (a `String` compares canonically equivalent text as equal),
  /// shown as text when they differ.
  private func assertSameBytes(
    _ actual: [UInt8], _ expected: [UInt8], _ message: String, file: StaticString, line: UInt
  ) {
    XCTAssertTrue(
      actual == expected,
      "\(message)\n   got: \(String(decoding: actual, as: UTF8.self))\nwanted: \(String(decoding: expected, as: UTF8.self))",
      file: file, line: line)
  }

  /// Bytes of no valid UTF-8 at the escaper's edges, controls, the layout characters, and
  /// the characters JSON escapes itself.
  private let awkward: [UInt8] =
    [0x41, 0xF4, 0x8F, 0xBF, 0xBF, 0xF4, 0x90, 0x80, 0x80, 0xED, 0xA0, 0x80, 0xC0, 0xAF, 0xFF]
    + Array("\n\t\r\"\\/\u{7F}\u{85}\u{2028}\u{2029}\u{202E}\u{2066}é☃".utf8) + [0xE2, 0x82]

  func testEveryKindOfRootAndStepIsWrittenAsTheCWriterDoes() throws {
    let type = text("Shop.ImageCache")
    let steps = [
      step(
        type, object: 0x7f3a_0000_beef, offset: 16, kind: Int(CHOLDERS_STEP_FIELD),
        field: text(awkward)),
      step(
        text(awkward), object: 0, offset: 40, kind: Int(CHOLDERS_STEP_ELEMENT), element: 2,
        count: 3),
      step(
        text("closure context"), object: UInt.max, offset: 24,
        kind: Int(CHOLDERS_STEP_CAPTURES), captures: [text("self"), text(awkward), text("")],
        more: 3),
      step(
        text("closure context"), object: 0x10, offset: 16,
        kind: Int(CHOLDERS_STEP_CAPTURES)),
      step(text(""), object: 0x5611_b00d_7340, offset: 4_096),
    ]
    let paths = [
      path(root(Int(CHOLDERS_ROOT_GLOBAL), symbol: text(awkward), module: text(awkward)), steps),
      path(root(Int(CHOLDERS_ROOT_GLOBAL), offset: 0x1234), []),
      path(root(Int(CHOLDERS_ROOT_GLOBAL), offset: 0), [steps[4]]),
      path(root(Int(CHOLDERS_ROOT_STACK), tid: 4_711), [steps[0]]),
      path(root(Int(CHOLDERS_ROOT_STACK)), []),
      path(root(Int(CHOLDERS_ROOT_CYCLE)), [steps[1], steps[2]]),
      path(root(Int(CHOLDERS_ROOT_HEAP)), []),
      path(root(Int(CHOLDERS_ROOT_NONE)), [steps[3]]),
    ]
    try assertWrittenAlike(answer(paths, direct: 300, more: 292, surplus: 2))
    try assertWrittenAlike(answer(Array(paths.prefix(1)), direct: 1, more: 0))
  }

  func testNoPathsAndNotFound() throws {
    try assertWrittenAlike(answer([], direct: 0, more: 0))
    try assertWrittenAlike(answer([], direct: 5, more: 5, surplus: 1))
    var missing = answer([], direct: 0, more: 0)
    missing.found = 0
    XCTAssertNil(HoldersValue(missing))
    XCTAssertEqual(try cText(missing), Array("null".utf8))
  }

  /// Random names (random bytes, most of them ASCII) in random paths.
  func testRandomAnswersAreWrittenAlike() throws {
    let seed = UInt64.random(in: 0...UInt64.max)
    print("HoldersValueTests seed: \(seed)")
    var generator = SplitMix(seed: seed)
    func name() -> cholders_text {
      text(
        (0..<Int.random(in: 0...12, using: &generator)).map { _ in
          Bool.random(using: &generator)
            ? UInt8.random(in: 0x20...0x7E, using: &generator)
            : UInt8.random(in: 0...255, using: &generator)
        })
    }
    for round in 0..<200 {
      let paths = (0..<Int.random(in: 0...3, using: &generator)).map { _ in
        let kind = Int.random(in: 0...4, using: &generator)
        let root = root(
          kind, tid: Int64.random(in: -1...9_999, using: &generator),
          symbol: Bool.random(using: &generator) ? name() : nil,
          offset: UInt.random(in: 0...UInt.max, using: &generator), module: name())
        let steps = (0..<Int.random(in: 0...3, using: &generator)).map { _ in
          step(
            name(), object: UInt.random(in: 0...UInt.max, using: &generator),
            offset: UInt32.random(in: 16...512, using: &generator),
            kind: Int.random(in: 0...3, using: &generator), field: name(),
            element: Int64.random(in: 0...99, using: &generator), count: 100,
            captures: (0..<Int.random(in: 0...3, using: &generator)).map { _ in name() },
            more: Int64.random(in: 0...2, using: &generator))
        }
        return path(root, steps)
      }
      let direct = UInt64(paths.count) + UInt64.random(in: 0...5, using: &generator)
      try assertWrittenAlike(
        answer(
          paths, direct: direct, more: direct - UInt64(paths.count),
          surplus: UInt64.random(in: 0...2, using: &generator)), "seed \(seed), round \(round)")
    }
  }
}

/// A seeded generator, so that a failing round can be replayed from its printed seed.
private struct SplitMix: RandomNumberGenerator {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
