/// Reads the nested parts of a holders value (`paths`, each `root` and `steps`) from a
/// ``JSONScanner``, and a whole HOLDERS-VALUE from a string.
///
/// Why apart from ``RecordParser``: a holders value is the one nested shape in the log, and
/// the leak assertions parse the same value in-process (``HolderReport/parse(json:)``), so the
/// rule lives in one place. Everything it keeps is capped by ``HolderLimits``; integers are
/// bounded by ``LogLimits/maximumCount``; a wrong shape or type is a ``JSONScanner/Failure``
/// whose message names the field, which the reader turns into a malformed-line warning.
enum HolderValueParser {
  typealias Failure = JSONScanner.Failure

  enum Key {
    static let direct: UInt64 = 0x7463_6572_6964  // "direct"
    static let more: UInt64 = 0x6572_6f6d  // "more"
    static let paths: UInt64 = 0x73_6874_6170  // "paths"
    static let scanUs: UInt64 = 0x73_755f_6e61_6373  // "scan_us"
    static let surplus: UInt64 = 0x73_756c_7072_7573  // "surplus"
    static let root: UInt64 = 0x746f_6f72  // "root"
    static let steps: UInt64 = 0x73_7065_7473  // "steps"
    static let kind: UInt64 = 0x646e_696b  // "kind"
    static let field: UInt64 = 0x64_6c65_6966  // "field"
    static let element: UInt64 = 0x74_6e65_6d65_6c65  // "element"
    static let count: UInt64 = 0x74_6e75_6f63  // "count"
    static let captures: UInt64 = 0x7365_7275_7470_6163  // "captures"
    static let type: UInt64 = 0x6570_7974  // "type"
    static let obj: UInt64 = 0x6a626f  // "obj"
    static let off: UInt64 = 0x66666f  // "off"
    static let sym: UInt64 = 0x6d7973  // "sym"
    static let mod: UInt64 = 0x646f6d  // "mod"
    static let tid: UInt64 = 0x646974  // "tid"
  }

  /// A count within ``LogLimits/counts``.
  static func count(_ s: inout JSONScanner, _ name: String) throws(Failure) -> Int {
    let value = try s.readInteger()
    guard value >= 0 && value <= LogLimits.maximumCount else {
      throw Failure("'\(name)' is out of range (0 to 2^48)")
    }
    return Int(value)
  }

  /// `paths`: an array of paths. Returns the paths kept and how many were dropped beyond
  /// ``HolderLimits/maximumPaths``.
  static func paths(_ s: inout JSONScanner) throws(Failure) -> (kept: [HolderPath], dropped: Int) {
    try s.expect(UInt8(ascii: "["), "'[' for 'paths'")
    var kept: [HolderPath] = []
    var dropped = 0
    if s.consume(UInt8(ascii: "]")) { return (kept, 0) }
    repeat {
      let path = try self.path(&s)
      if kept.count < HolderLimits.maximumPaths {
        kept.append(path)
      } else {
        dropped += 1
      }
    } while s.consume(UInt8(ascii: ","))
    try s.expect(UInt8(ascii: "]"), "',' or ']' in 'paths'")
    return (kept, dropped)
  }

  private static func path(_ s: inout JSONScanner) throws(Failure) -> HolderPath {
    try s.expect(UInt8(ascii: "{"), "a path object")
    var root: HolderRoot?
    var steps: [HolderStep]?
    var omitted = 0
    if !s.consume(UInt8(ascii: "}")) {
      repeat {
        let key = try s.readKey()
        if s.consumeNull() { continue }
        switch key {
        case Key.root: root = try self.root(&s)
        case Key.steps: (steps, omitted) = try self.steps(&s)
        default: try s.skipValue()
        }
      } while s.consume(UInt8(ascii: ","))
      try s.expect(UInt8(ascii: "}"), "',' or '}' in a path")
    }
    guard let root else { throw Failure("holder path without 'root'") }
    guard let steps else { throw Failure("holder path without 'steps'") }
    return HolderPath(root: root, steps: steps, omittedSteps: omitted)
  }

  private static func root(_ s: inout JSONScanner) throws(Failure) -> HolderRoot {
    try s.expect(UInt8(ascii: "{"), "a root object")
    var kind: String?
    var root = HolderRoot(kind: .none)
    if !s.consume(UInt8(ascii: "}")) {
      repeat {
        let key = try s.readKey()
        if s.consumeNull() { continue }
        switch key {
        case Key.kind: kind = try s.readString()
        case Key.sym: root.symbol = try s.readString()
        case Key.mod: root.module = try s.readString()
        case Key.off: root.offset = try s.readHexString()
        case Key.tid: root.tid = try s.readInteger()
        default: try s.skipValue()
        }
      } while s.consume(UInt8(ascii: ","))
      try s.expect(UInt8(ascii: "}"), "',' or '}' in a root")
    }
    guard let kind, !kind.isEmpty else { throw Failure("holder root without 'kind'") }
    root.kind = HolderRoot.Kind(rawValue: kind)
    return root
  }

  /// `steps`, keeping the first ``HolderLimits/maximumSteps`` − 1 and the last one (which
  /// points at the object), and counting those in between.
  private static func steps(_ s: inout JSONScanner) throws(Failure) -> ([HolderStep], Int) {
    try s.expect(UInt8(ascii: "["), "'[' for 'steps'")
    var steps: [HolderStep] = []
    var omitted = 0
    if s.consume(UInt8(ascii: "]")) { return (steps, 0) }
    repeat {
      let step = try self.step(&s)
      if steps.count < HolderLimits.maximumSteps {
        steps.append(step)
      } else {
        steps[steps.count - 1] = step
        omitted += 1
      }
    } while s.consume(UInt8(ascii: ","))
    try s.expect(UInt8(ascii: "]"), "',' or ']' in 'steps'")
    return (steps, omitted)
  }

  private static func step(_ s: inout JSONScanner) throws(Failure) -> HolderStep {
    try s.expect(UInt8(ascii: "{"), "a step object")
    var type: String?
    var step = HolderStep(type: "", edge: .unnamed)
    var field: String?
    var element: Int?
    var count: Int?
    var captures: [String]?
    if !s.consume(UInt8(ascii: "}")) {
      repeat {
        let key = try s.readKey()
        if s.consumeNull() { continue }
        switch key {
        case Key.type: type = try s.readString()
        case Key.obj: step.address = Address(try s.readHexString())
        case Key.off: step.offset = try self.count(&s, "off")
        case Key.field: field = try s.readString()
        case Key.element: element = try self.count(&s, "element")
        case Key.count: count = try self.count(&s, "count")
        case Key.captures: captures = try self.captures(&s)
        default: try s.skipValue()
        }
      } while s.consume(UInt8(ascii: ","))
      try s.expect(UInt8(ascii: "}"), "',' or '}' in a step")
    }
    guard let type else { throw Failure("holder step without 'type'") }
    step.type = type
    let edges = (field != nil ? 1 : 0) + (element != nil ? 1 : 0) + (captures != nil ? 1 : 0)
    guard edges <= 1 else {
      throw Failure("holder step with more than one of 'field', 'element' and 'captures'")
    }
    if let field {
      step.edge = .field(field)
    } else if let element {
      step.edge = .element(index: element, count: count)
    } else if let captures {
      step.edge = .captures(captures)
    }
    return step
  }

  private static func captures(_ s: inout JSONScanner) throws(Failure) -> [String] {
    try s.expect(UInt8(ascii: "["), "'[' for 'captures'")
    var types: [String] = []
    var dropped = 0
    if s.consume(UInt8(ascii: "]")) { return types }
    repeat {
      let type = try s.readString()
      if types.count < HolderLimits.maximumCaptures {
        types.append(type)
      } else {
        dropped += 1
      }
    } while s.consume(UInt8(ascii: ","))
    try s.expect(UInt8(ascii: "]"), "',' or ']' in 'captures'")
    if dropped > 0 { types.append("… \(dropped) more") }
    return types
  }

  /// A whole HOLDERS-VALUE: `{"direct":…,"more":…,"paths":[…],"surplus":…,"scan_us":…}`.
  static func value(_ s: inout JSONScanner) throws(Failure) -> HolderReport {
    try s.expect(UInt8(ascii: "{"), "a JSON object")
    var direct: Int?
    var more = 0
    var paths: (kept: [HolderPath], dropped: Int)?
    var scan: Int?
    var surplus = 0
    if !s.consume(UInt8(ascii: "}")) {
      repeat {
        let key = try s.readKey()
        if s.consumeNull() { continue }
        switch key {
        case Key.direct: direct = try count(&s, "direct")
        case Key.more: more = try count(&s, "more")
        case Key.paths: paths = try self.paths(&s)
        case Key.scanUs: scan = try count(&s, "scan_us")
        case Key.surplus: surplus = try count(&s, "surplus")
        default: try s.skipValue()
        }
      } while s.consume(UInt8(ascii: ","))
      try s.expect(UInt8(ascii: "}"), "',' or '}'")
    }
    guard let direct else { throw Failure("holders value without 'direct'") }
    guard let paths else { throw Failure("holders value without 'paths'") }
    return HolderReport(
      direct: direct, more: more + paths.dropped, paths: paths.kept, surplus: surplus,
      scanMicroseconds: scan)
  }
}

extension HolderReport {
  /// Parses a HOLDERS-VALUE, as `DeallocTrace.holdersJSON(of:others:)` returns it: `nil` for
  /// `null` (no live registered object). Throws ``HolderReport/ParseError`` with a one-line
  /// message for anything else that is not a holders value.
  public static func parse(json: String) throws(ParseError) -> HolderReport? {
    var text = json
    let result = text.withUTF8 { bytes -> Result<HolderReport?, ParseError> in
      var scanner = JSONScanner(bytes)
      if scanner.consumeNull() {
        scanner.skipWhitespace()
        return scanner.isAtEnd ? .success(nil) : .failure(ParseError("unexpected bytes after null"))
      }
      do throws(JSONScanner.Failure) {
        let report = try HolderValueParser.value(&scanner)
        scanner.skipWhitespace()
        guard scanner.isAtEnd else { throw JSONScanner.Failure("unexpected bytes after the value") }
        return .success(report)
      } catch {
        return .failure(ParseError(error.message))
      }
    }
    return try result.get()
  }

  /// Why a string is not a holders value, in one line.
  public struct ParseError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
  }
}
