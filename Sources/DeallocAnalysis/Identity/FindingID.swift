import DeallocLog

/// A short, stable name for a finding: the first 12 hex digits of a SHA-256 of what makes
/// the finding what it is, and nothing of when or where it ran.
///
/// What goes in (rule 3, ``rule``): the kind, the type and the names of the signature
/// frames that belong to the program, each normalised by ``SymbolNormalization`` (closure
/// numbers, specialization and merge markers, unknown-context addresses and Swift Testing's
/// macro names taken out; XCTest, Swift Testing, libdispatch, runtime and thunk frames left
/// out, and the test function too when a program frame lies inside it). What stays out: addresses, module offsets, build directories, pids, times and the
/// holder path, so the id of a leak is the same across rebuilds, machines, runs, debug and
/// release where the program's frame survives, with holders on or off, and after unrelated
/// tests are added; it changes when the code that enqueues the object changes. That is what
/// lets a baseline, a suppression (`id:HASH`) and a pull-request diff refer to a finding.
///
/// Rule 1 (``legacy(kind:type:symbols:holderKey:)``) hashed every signature frame as it was
/// and the holder path's key; baselines written before `idRule` existed hold its ids, and
/// ``Baseline`` maps them to this rule from their entries' kind, type and frames. Rule 2 kept
/// the test function that called a helper; rule 3 hashes the same text otherwise (its
/// header still says 2), so only the ids of leaks made below a test function moved, and a
/// baseline entry's frames map those too.
///
/// A frame without a symbol (a stripped library, or a log written with symbols off)
/// contributes only its module's file name, see ``stableName(of:)``. The trade-off: two
/// call sites in the same stripped module share an id, and `--symbolize`, which can name
/// such a frame, changes its id, so a baseline must be written and checked with the same
/// `--symbolize` setting.
///
/// 12 hex digits are 48 bits: among a thousand findings the chance that two share an id by
/// accident is below one in 10^8, and the id stays short enough to read aloud and to type.
public struct FindingID: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// The number of hex digits.
  public static let length = 12

  /// The id, in lower-case hex.
  public let hex: String

  public var description: String { hex }

  /// The id rule this tool computes, written into baselines as `idRule`.
  public static let rule = 3

  /// The id of a finding of `kind` and `type` whose signature frames have `symbols` (from
  /// ``stableName(of:)``), by the current ``rule``. The header is rule 2's: rule 3 changed
  /// which frames go in, not how they are hashed, so every other id stayed as it was.
  public init(kind: Finding.Kind, type: String, symbols: [String]) {
    self.init(kind: kind, type: type, programFrames: SymbolNormalization.programFrames(symbols))
  }

  /// ``init(kind:type:symbols:)`` from the program frames' names the finding keeps
  /// (``ProgramFrames/names``).
  init(kind: Finding.Kind, type: String, programFrames: [String]) {
    self.init(
      header: "dealloctrace finding id 2\n", kind: kind,
      type: SymbolNormalization.normalized(type), symbols: programFrames, holderKey: nil,
      hashesHolders: false)
  }

  /// The id rule 2 gave: this rule's, with the test function that called a helper kept.
  /// Kept so that an `id:` suppression written by rule 2 still names its finding (a
  /// baseline entry is mapped from its frames instead).
  public static func ruleTwo(kind: Finding.Kind, type: String, symbols: [String]) -> FindingID {
    ruleTwo(
      kind: kind, type: type,
      programFramesWithTheTest: SymbolNormalization.programFrames(
        symbols, leavingOutTheTest: false))
  }

  /// ``ruleTwo(kind:type:symbols:)`` from the names the finding keeps
  /// (``ProgramFrames/namesWithTheTest``).
  static func ruleTwo(
    kind: Finding.Kind, type: String, programFramesWithTheTest: [String]
  ) -> FindingID {
    FindingID(
      header: "dealloctrace finding id 2\n", kind: kind,
      type: SymbolNormalization.normalized(type), symbols: programFramesWithTheTest,
      holderKey: nil, hashesHolders: false)
  }

  /// The id rule 1 gave: every signature frame's name as it was, and the holder path's key
  /// (`nil` hashed as its own marker). Kept to recognise the ids of old baselines.
  public static func legacy(
    kind: Finding.Kind, type: String, symbols: [String], holderKey: String?
  ) -> FindingID {
    FindingID(
      header: "dealloctrace finding id 1\n", kind: kind, type: type, symbols: symbols,
      holderKey: holderKey, hashesHolders: true)
  }

  private init(
    header: String, kind: Finding.Kind, type: String, symbols: [String], holderKey: String?,
    hashesHolders: Bool
  ) {
    var message: [UInt8] = []
    message.reserveCapacity(
      64 + type.utf8.count + symbols.reduce(0) { $0 + $1.utf8.count + 5 }
        + (holderKey?.utf8.count ?? 0))
    message.append(contentsOf: header.utf8)
    // Each field as its length in bytes, a colon, and its bytes.
    func field(_ text: String) {
      message.append(contentsOf: String(text.utf8.count).utf8)
      message.append(UInt8(ascii: ":"))
      message.append(contentsOf: text.utf8)
    }
    field(kind.rawValue)
    field(type)
    field(String(symbols.count))
    symbols.forEach(field)
    if hashesHolders {
      if let holderKey {
        message.append(UInt8(ascii: "h"))
        field(holderKey)
      } else {
        message.append(UInt8(ascii: "-"))
      }
    }
    hex = SHA256.hexDigest(message, digits: Self.length)
  }

  /// An id as written by a person or read from a file: exactly ``length`` hex digits,
  /// either case (kept in lower case), or `L` and 12 hex digits (the census ids the first
  /// recorders wrote, see ``CensusGroup/canonicalID(_:)``); `nil` for anything else.
  public init?(parsing text: String) {
    let lower = CensusGroup.canonicalID(text).lowercased()
    guard lower.utf8.count == Self.length,
      lower.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
    else { return nil }
    hex = lower
  }

  public static func < (lhs: FindingID, rhs: FindingID) -> Bool { lhs.hex < rhs.hex }

  /// What a frame contributes to an id: its demangled symbol; without one, the file name of
  /// its module (`libfoo.so`, not the directory it was built or installed in, and never
  /// the offset, which moves with every build); without either, `?`.
  public static func stableName(of frame: Frame) -> String {
    if let symbol = frame.symbol { return symbol }
    if let module = frame.module {
      return module.split(separator: "/").last.map(String.init) ?? module
    }
    return "?"
  }
}
