import DeallocLog
import Foundation

/// A group of problem objects that share a ``Signature``: the unit a person acts on, a gate
/// counts and a suppression matches.
public struct Finding: Sendable, Equatable {
  /// What is wrong, most serious first (the order findings are reported in).
  ///
  /// Closed: each kind is a gate threshold (`--max-…`), a ``Summary`` counter and a section of
  /// every report, so a new kind is a new report format that clients see anyway.
  public enum Kind: String, Sendable, CaseIterable, Codable, Comparable {
    /// Released by the queue but still alive at the end of the session: someone else holds it.
    case leaked
    /// A leak check saw the object alive while it was not waiting in any queue.
    case trueLeak
    /// Still in a queue, older than the stuck threshold, in a session that did not end.
    case stuck
    /// Still in a queue when the session ended cleanly.
    case neverReleased

    public static func < (lhs: Kind, rhs: Kind) -> Bool {
      declared.firstIndex(of: lhs)! < declared.firstIndex(of: rhs)!
    }

    /// `allCases`, made once: it is a new array at every use, and sorting findings compares
    /// kinds thousands of times.
    private static let declared = allCases

    /// A short human title.
    public var title: String {
      switch self {
      case .leaked: return "leaked after release"
      case .trueLeak: return "true leak"
      case .stuck: return "stuck in queue"
      case .neverReleased: return "never released"
      }
    }
  }

  public var kind: Kind {
    didSet { (id, ruleOneID, ruleTwoID) = Self.ids(kind, signature, programFrames) }
  }
  public var signature: Signature {
    didSet {
      programFrames = ProgramFrames(signature.frames)
      (id, ruleOneID, ruleTwoID) = Self.ids(kind, signature, programFrames)
    }
  }
  /// The names of the signature's frames that belong to the program, worked out once with
  /// the signature, for the ids.
  private(set) var programFrames: ProgramFrames
  /// The finding's stable id (see ``FindingID``; the holder path stays out, so findings held
  /// differently share it and a baseline adds up their counts): a SHA-256, worked out when the
  /// finding is made (and again only if its kind or signature change), not at every use by
  /// the gate, the renderers, a baseline or a diff.
  public private(set) var id: FindingID
  /// The id rule 1 gave this finding (``FindingID/legacy(kind:type:symbols:holderKey:)``),
  /// so that an `id:` suppression written before rule 2 still covers it.
  public private(set) var ruleOneID: FindingID
  /// The id rule 2 gave this finding (``FindingID/ruleTwo(kind:type:symbols:)``): ``id``
  /// itself unless a test function called the code that enqueued it, so that an `id:`
  /// suppression written before rule 3 still covers it.
  public private(set) var ruleTwoID: FindingID
  /// The full enqueue stack of the first object of the group (empty when unknown), for display
  /// and for `frame:GLOB` suppressions.
  public var stack: [Frame]
  /// Who held the first member that has a holders record, when the recorder scanned for
  /// holders (every member shares its ``Signature/holderKey``; addresses differ).
  public var holders: HolderReport?
  /// How many objects (or checks, for true leaks) the group holds.
  public var count: Int
  /// For a leaked finding: the leak checks that saw its objects alive after their release.
  /// They are facts of the same bug, so they are counted here and make no true-leak finding
  /// of their own (0 for the other kinds).
  public var checks = 0
  /// The first few members, in log order.
  public var examples: [FindingExample]
  /// A plain-language explanation of the group.
  public var explanation: String
  /// Every distinct enqueue stack among the members (the first is ``stack``) with how many
  /// members have it, so that a `frame:` suppression judges each member by its own stack:
  /// members share the signature's first frames, but deeper frames can differ.
  var stackVariants: [StackVariant] = []

  /// `programFrames`: the signature's (``ProgramFrames``), when the caller has them.
  init(
    kind: Kind, signature: Signature, programFrames: ProgramFrames? = nil, stack: [Frame],
    holders: HolderReport? = nil, count: Int, examples: [FindingExample], explanation: String,
    stackVariants: [StackVariant] = []
  ) {
    self.kind = kind
    self.signature = signature
    self.programFrames = programFrames ?? ProgramFrames(signature.frames)
    (self.id, self.ruleOneID, self.ruleTwoID) = Self.ids(kind, signature, self.programFrames)
    self.stack = stack
    self.holders = holders
    self.count = count
    self.examples = examples
    self.explanation = explanation
    self.stackVariants = stackVariants
  }

  private static func ids(
    _ kind: Kind, _ signature: Signature, _ programFrames: ProgramFrames
  ) -> (FindingID, ruleOne: FindingID, ruleTwo: FindingID) {
    (
      FindingID(kind: kind, type: signature.type, programFrames: programFrames.names),
      FindingID.legacy(
        kind: kind, type: signature.type, symbols: signature.frames.map(FindingID.stableName),
        holderKey: signature.holderKey),
      FindingID.ruleTwo(
        kind: kind, type: signature.type, programFramesWithTheTest: programFrames.namesWithTheTest)
    )
  }

  /// Counts one more member, enqueued through stack variant `variant`, held as `holders`
  /// says, and keeps its example while there are fewer than `maximumExamples`.
  ///
  /// One method, so that the finding is reached once per member: changed field by field
  /// through the array that holds it, each change checked that array's uniqueness again.
  mutating func addMember(
    variant: Int, holders: HolderReport?, checks: Int = 0, maximumExamples: Int,
    _ example: @autoclosure () -> FindingExample
  ) {
    count += 1
    self.checks += checks
    if holders != nil, self.holders == nil { self.holders = holders }
    stackVariants[variant].count += 1
    if examples.count < maximumExamples {
      var example = example()
      example.stackKey = stackVariants[variant].key
      examples.append(example)
    }
  }
}

extension Finding {
  /// The test that made `example` (the program frame its own enqueue stack shows called by
  /// XCTest or Swift Testing), named as the outputs name frames; `nil` when its stack shows
  /// none. Why per member: one finding may hold members from several tests and frameworks
  /// (the id leaves the test out), and each occurrence says which test it came from.
  func test(of example: FindingExample) -> String? {
    guard let variant = stackVariants.first(where: { $0.key == example.stackKey }) else {
      return nil
    }
    let frames = Array(variant.stack.drop { $0.isMachinery })
    guard let index = SymbolNormalization.testFunctionIndex(frames.map { $0.symbol ?? "" })
    else { return nil }
    return FrameNaming.shortName(frames[index])
  }
}

/// One distinct enqueue stack among a finding's members.
struct StackVariant: Sendable, Equatable {
  /// The stack's return addresses, which tell stacks apart.
  var key: String
  var stack: [Frame]
  var count: Int
}

/// One member of a finding.
public struct FindingExample: Sendable, Equatable {
  public var session: Int
  /// The object's id, when it was ever enqueued.
  public var id: UInt64?
  public var address: Address
  public var type: String
  public var queue: String?
  public var enqueuedAt: Int64?
  public var releasedAt: Int64?
  /// The strong retain count left after the release, for survivors.
  public var retainCount: Int?
  /// For true leaks: when the check ran and its label.
  public var checkedAt: Int64?
  public var checkLabel: String?
  /// How long it has been in the queue at the session's last record (stuck, never released).
  public var age: Int64?
  /// Where the record that made it a finding is (the enqueue, release or check line).
  public var location: LogLocation
  /// Who held this member when the recorder scanned for it, if it did.
  public var holders: HolderReport?
  /// Which of the finding's ``StackVariant``s this member was enqueued through.
  var stackKey = ""
}

/// What groups findings: the type plus the first frames of the enqueue stack outside the
/// queue, the tracer and the Swift runtime.
///
/// Why those frames: every enqueue stack starts inside `DeallocQueue.enqueue` and the
/// recorder; the first frames after them name the caller that let the object go, which is
/// what differs between two bugs of the same type.
public struct Signature: Sendable, Hashable {
  /// The number of caller frames kept.
  public static let depth = 3

  public var type: String
  public var frames: [Frame]
  /// The holder path's grouping key (``HolderReport/groupingKey``) when the recorder scanned
  /// for holders: objects held the same way group together, those held differently apart.
  /// `nil` without a holders record, which leaves ``key`` exactly what it was before holder
  /// paths existed (suppressions and saved keys keep matching).
  public var holderKey: String?

  /// A stable text key: the type, then each frame's display name, then `holders: ` and the
  /// holder key when there is one.
  public var key: String {
    Self.key(type: type, callersKey: Self.callersKey(frames), holderKey: holderKey)
  }

  /// ``key`` from its parts, so that the frames' part can be built once per stack and shared
  /// by every type enqueued through it.
  static func key(type: String, callersKey: String, holderKey: String?) -> String {
    guard let holderKey else { return type + callersKey }
    return type + callersKey + " | holders: " + holderKey
  }

  /// The frames' part of ``key``: each frame's display name after a separator.
  static func callersKey(_ frames: [Frame]) -> String {
    var text = ""
    for frame in frames {
      text += " | "
      text += frame.displayName
    }
    return text
  }

  /// What findings are grouped by: the type and the frame names an id hashes
  /// (``SymbolNormalization/programFrames(_:)``), both normalised, and the holder key.
  ///
  /// Why not ``key``: stacks that differ only in plumbing, closure numbers or the test that
  /// called the program (one helper's leak seen from XCTest and from Swift Testing) are one
  /// bug with one id, so they must be one finding, whose members keep their own stacks
  /// (``Finding/stackVariants``). ``key`` names every frame as logged, for display.
  public var groupingKey: String {
    groupingKey(with: ProgramFrames(frames))
  }

  /// ``groupingKey`` from this signature's program frames, when the caller has them.
  func groupingKey(with programFrames: ProgramFrames) -> String {
    Self.key(
      type: SymbolNormalization.normalized(type),
      callersKey: Self.groupingCallersKey(programFrames), holderKey: holderKey)
  }

  /// The frames' part of ``groupingKey``: each name an id hashes after a separator.
  static func groupingCallersKey(_ programFrames: ProgramFrames) -> String {
    var text = ""
    for name in programFrames.names {
      text += " | "
      text += name
    }
    return text
  }

  /// The type and the innermost caller, for titles: the caller's short name as outputs
  /// show names (``FrameNaming``: demangled, a merged specialization by its function).
  public var title: String {
    guard let first = frames.first else { return type }
    return "\(type) from \(FrameNaming.shortName(first))"
  }

  public init(type: String, frames: [Frame], holderKey: String? = nil) {
    self.type = type
    self.frames = frames
    self.holderKey = holderKey
  }

  /// The signature of an enqueue stack: skips frames of the queue, the tracer, the unwinder
  /// and the Swift runtime, then keeps ``depth`` frames.
  public init(type: String, stack: [Frame], holderKey: String? = nil) {
    self.type = type
    self.frames = Self.callers(in: stack)
    self.holderKey = holderKey
  }

  /// The frames a signature keeps from an enqueue stack: the first ``depth`` that are not
  /// machinery.
  public static func callers(in stack: [Frame]) -> [Frame] {
    callers(in: stack) { $0.isMachinery }
  }

  /// ``callers(in:)`` with the machinery rule answered by `isMachinery` (which may remember
  /// its answers), asked once per frame up to the last one kept.
  static func callers(in stack: [Frame], isMachinery: (Frame) -> Bool) -> [Frame] {
    var kept: [Frame] = []
    kept.reserveCapacity(depth)
    for frame in stack where !isMachinery(frame) {
      kept.append(frame)
      if kept.count == depth { break }
    }
    return kept
  }

  /// Whether a frame belongs to the machinery rather than to the program
  /// (``Frame/isMachinery``).
  public static func isMachinery(_ frame: Frame) -> Bool { frame.isMachinery }
}
