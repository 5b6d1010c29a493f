import Testing

@testable import DeallocAnalysis
@testable import DeallocLog

/// What the end of a session computes once per distinct (type, stack) or holder key, and
/// the texts it builds from parts, must match what it computed per object before.
@Suite struct FindingOriginsTests {
  static let machinery = "DeallocQueue.DeallocQueue.enqueue() -> ()"

  /// Objects 1 and 2 share a type and a stack, 3 has another stack, 4 another type. The
  /// stacks' frames share return addresses (`Line.stack` numbers them from one base), so
  /// the machinery frame of stack 1 and the program frame of stack 2 have the same address.
  static func report() throws -> Report {
    let lines = [
      Line.session(),
      Line.stack(1, symbols: [machinery, "App.A.run() -> ()"]),
      Line.stack(2, symbols: ["App.B.run() -> ()", "App.C.run() -> ()"]),
      Line.enqueue(1, t: 10, stack: 1),
      Line.enqueue(2, t: 20, stack: 1),
      Line.enqueue(3, t: 30, stack: 2),
      Line.enqueue(4, t: 40, type: "T.Other", stack: 1),
      Line.enqueue(5, t: 50, stack: 1),
      Line.end(t: 1000, pending: 5),
    ]
    return try TemporaryLog(lines).report()
  }

  @Test func membersOfOneTypeAndStackShareAFindingAndOthersDoNot() throws {
    let findings = try Self.report().findings
    #expect(findings.map(\.kind) == [.neverReleased, .neverReleased, .neverReleased])
    #expect(findings.map(\.count) == [3, 1, 1])
    #expect(findings.map { $0.examples.compactMap(\.id) } == [[1, 2, 5], [3], [4]])
    #expect(findings.map(\.signature.type) == ["T.Node", "T.Node", "T.Other"])
    #expect(findings[0].signature.frames.compactMap(\.symbol) == ["App.A.run() -> ()"])
    // The frame at the machinery frame's address is judged by its own symbol.
    #expect(
      findings[1].signature.frames.compactMap(\.symbol) == [
        "App.B.run() -> ()", "App.C.run() -> ()",
      ])
    #expect(findings[2].signature.frames == findings[0].signature.frames)
    #expect(Set(findings.map(\.id)).count == 3)
  }

  @Test func anOriginIsMadeOncePerTypeStackAndHolderKey() {
    var origins = FindingOrigins()
    let (one, two) = (StackSlot(rawValue: 0), StackSlot(rawValue: 1))
    let frames = [Frame(ip: 0x10, symbol: Self.machinery), Frame(ip: 0x20, symbol: "App.f()")]
    #expect(origins.known(type: 0, stack: one) == nil)
    let first = origins.origin(type: 0, typeName: "T", stack: one, frames: frames)
    #expect(origins.known(type: 0, stack: one) === first)
    #expect(origins.origin(type: 0, typeName: "T", stack: one, frames: []) === first)
    let otherStack = origins.origin(type: 0, typeName: "T", stack: two, frames: [frames[1]])
    let otherType = origins.origin(type: 1, typeName: "U", stack: one, frames: [])
    let noStack = origins.origin(type: 0, typeName: "T", stack: .noStack, frames: [])
    let held = origins.origin(type: 0, typeName: "T", stack: one, holderKey: "global g", frames: [])
    let ids = [first, otherStack, otherType, noStack, held].map(\.id)
    #expect(ids == [0, 1, 2, 3, 4])
    // A stack's frames are taken the first time it is seen.
    #expect(otherType.stack == frames)
    #expect(first.signature == Signature(type: "T", stack: frames))
    #expect(held.signature == Signature(type: "T", stack: frames, holderKey: "global g"))
    #expect(held.groupingKey == held.signature.groupingKey)
    #expect(noStack.signature.frames.isEmpty)
    #expect(origins.known(type: 0, stack: one, holderKey: "global g") === held)
    #expect(origins.known(type: 0, stack: one, holderKey: "global h") == nil)
  }

  @Test func keysBuiltFromPartsMatchTheirRules() {
    let frames = [
      Frame(ip: 0, symbol: "App.f()"), Frame(ip: 0xabc, module: "/lib/libx.so", offset: 0x12),
      Frame(ip: UInt64.max),
    ]
    #expect(FindingCollector.key(of: frames) == "0,abc,ffffffffffffffff")
    #expect(FindingCollector.key(of: []) == "")
    for holderKey in [nil, "global g"] {
      let signature = Signature(type: "T", frames: frames, holderKey: holderKey)
      let base = (["T"] + frames.map(\.displayName)).joined(separator: " | ")
      #expect(signature.key == (holderKey.map { base + " | holders: " + $0 } ?? base))
    }
    #expect(Signature(type: "T", frames: []).key == "T")
  }
}

/// Every sentence of a check's explanation, word for word.
@Suite struct CheckExplanationTests {
  static let check = CheckRecord(
    time: 5_000, object: Address(0x10), type: "T.Node", alive: true, label: "L")
  static let saw = "L saw T.Node alive at 5 µs."
  static let waiting = " It was waiting in queue 'shared', enqueued 4 µs earlier by 0x10."

  static func facts(
    releasedAt: Int64? = nil, freed: Bool? = nil, retainCount: Int? = nil,
    deallocAt: Int64? = nil, state: ObjectState? = nil, enqueuedBy: Frame? = Frame(ip: 0x10)
  ) -> ObjectFacts {
    ObjectFacts(
      id: 7, address: Address(0x10), type: "T.Node", queue: "shared", enqueuedAt: 1_000,
      enqueuedBy: enqueuedBy, releasedAt: releasedAt, freedByRelease: freed,
      retainCountAfterRelease: retainCount, deallocAt: deallocAt, state: state)
  }

  static func text(
    _ verdict: CheckVerdict.Verdict, _ facts: ObjectFacts?, neverEnqueued: Bool = true,
    callerName: String? = nil, label: String = "L"
  ) -> String {
    var check = Self.check
    check.label = label
    return Explanations.check(
      verdict, check, facts, sessionEnd: 20_000, ended: true, neverEnqueued: neverEnqueued,
      callerName: callerName)
  }

  @Test func checksMatchedWithNoObject() {
    #expect(
      Self.text(.trueLeak, nil)
        == Self.saw + " It was not waiting in any queue (it was never handed to one): a real leak.")
    #expect(
      Self.text(.trueLeak, nil, neverEnqueued: false, label: "")
        == "A leak check saw T.Node alive at 5 µs."
        + " It was not waiting in any queue at that moment: a real leak.")
  }

  @Test func falseLeaks() {
    let prefix = Self.saw + Self.waiting
    #expect(
      Self.text(.falseLeak, Self.facts(state: .neverReleased))
        == prefix + " The queue never released it before the session ended at 20 µs."
        + " Not a leak at the check, but the queue held it to the end.")
    #expect(
      Self.text(.falseLeak, Self.facts(state: .stuck))
        == prefix + " The queue had still not released it at the last record (20 µs):"
        + " the queue looks stuck.")
    #expect(
      Self.text(.falseLeak, Self.facts())
        == prefix + " It was still waiting at the last record (20 µs)."
        + " Not a leak: a delayed dealloc.")
    #expect(
      Self.text(.falseLeak, Self.facts(releasedAt: 7_000, freed: true))
        == prefix + " The queue released it at 7 µs (+2 µs) and it was freed."
        + " Not a leak: a delayed dealloc.")
    // A release that left the object alive makes the check a true leak, with or without a
    // later dealloc (issue 28 item 6).
    #expect(
      Self.text(
        .trueLeak, Self.facts(releasedAt: 7_000, freed: false, retainCount: 2, deallocAt: 9_000))
        == Self.saw + Self.waiting.dropLast()
        + ", but when the queue released it at 7 µs something else still held it"
        + " (retain count 2) until 9 µs: a real leak, not a delayed dealloc.")
    #expect(
      Self.text(.trueLeak, Self.facts(releasedAt: 7_000, freed: false, retainCount: 2))
        == Self.saw + Self.waiting.dropLast()
        + ", but when the queue released it at 7 µs something else still held it"
        + " (retain count 2): a real leak, not a delayed dealloc.")
  }

  @Test func trueLeaks() {
    #expect(
      Self.text(.trueLeak, Self.facts(releasedAt: 3_000, freed: true))
        == Self.saw + " It was not in a queue at that moment: the object it matched (id 7,"
        + " enqueued by 0x10 at 1 µs) had left queue 'shared' at 3 µs and that release freed"
        + " it, so what the check saw alive was another object: a real leak.")
    #expect(
      Self.text(.trueLeak, Self.facts(releasedAt: 3_000, freed: false, retainCount: 2))
        == Self.saw + " The queue 'shared' had already released it at 3 µs (enqueued by 0x10"
        + " at 1 µs), but something else still held it (retain count 2): a real leak.")
    #expect(
      Self.text(.trueLeak, Self.facts())
        == Self.saw + " It was not in a queue at that moment (queue 'shared' received it at"
        + " 1 µs by 0x10): a real leak at the time of the check.")
  }

  @Test func aKeptCallerNameStandsForTheFramesShortName() {
    #expect(
      Self.text(.trueLeak, Self.facts(), callerName: "Screen.close()")
        == Self.saw + " It was not in a queue at that moment (queue 'shared' received it at"
        + " 1 µs by Screen.close()): a real leak at the time of the check.")
    #expect(
      Self.text(.trueLeak, Self.facts(enqueuedBy: nil), callerName: "Screen.close()")
        == Self.saw + " It was not in a queue at that moment (queue 'shared' received it at"
        + " 1 µs): a real leak at the time of the check.")
  }
}
