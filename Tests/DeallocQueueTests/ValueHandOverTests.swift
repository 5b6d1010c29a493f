import DeallocQueue
import Dispatch
import TestSupport
import XCTest

/// Values that hold references (arrays, dictionaries, sets, structs, enums) handed to the
/// queue: the variable is nil after the call, nothing is freed during it, and every object
/// the value held is freed on the queue's target when the queue lets the value go.
///
/// No clocks: the queue is bounded at one entry, so each hand-over dispatches its drain to a
/// serial target held suspended, which runs it when the test resumes it.
final class ValueHandOverTests: XCTestCase {
  func testAnArrayOfObjects() {
    let harness = TargetedQueue()
    var cells: [Probe]? = harness.probes(3)
    harness.queue.releaseInBackground(&cells)
    harness.assertHandedOver(variableIsNil: cells == nil, releasing: 3)
  }

  func testADictionaryOfObjects() {
    let harness = TargetedQueue()
    var nodes: [Int: Probe]? = Dictionary(
      uniqueKeysWithValues: harness.probes(4).enumerated().map { ($0.offset, $0.element) })
    harness.queue.releaseInBackground(&nodes)
    harness.assertHandedOver(variableIsNil: nodes == nil, releasing: 4)
  }

  func testASetOfObjects() {
    let harness = TargetedQueue()
    var members: Set<HashableProbe>? = Set(harness.probes(5).map(HashableProbe.init))
    harness.queue.releaseInBackground(&members)
    harness.assertHandedOver(variableIsNil: members == nil, releasing: 5)
  }

  func testAStructHoldingArrays() {
    let harness = TargetedQueue()
    var screen: Screen? = Screen(cells: harness.probes(3), headers: harness.probes(2))
    harness.queue.releaseInBackground(&screen)
    harness.assertHandedOver(variableIsNil: screen == nil, releasing: 5)
  }

  func testAnEnumWithAnObjectPayload() {
    let harness = TargetedQueue()
    var slot: Slot? = .filled(harness.probes(1)[0])
    harness.queue.releaseInBackground(&slot)
    harness.assertHandedOver(variableIsNil: slot == nil, releasing: 1)
  }

  func testTheFreeFunctionTakesValuesToo() {
    var cells: [Probe]? = [Probe { _ in }]
    performBackgroundDeallocation(&cells)
    XCTAssertNil(cells)
  }

  func testANilValueIsANoOp() {
    let queue = DeallocQueue(label: "values", delay: .seconds(3600))
    var nothing: [Probe]? = nil
    queue.releaseInBackground(&nothing)
    XCTAssertEqual(queue.pendingCount, 0)
  }

  /// `pendingCount` and `maxPending` count a value as one entry, whatever it holds.
  func testAValueIsOneEntryForTheCountAndTheBound() {
    let target = DispatchQueue(label: "bounded-values")
    target.suspend()
    let queue = DeallocQueue(label: "values", delay: .seconds(3600), target: target, maxPending: 2)
    let deinits = Observed(0)
    var big: [Probe]? = (0..<1000).map { _ in Probe { _ in deinits.update { $0 += 1 } } }
    queue.releaseInBackground(&big)
    XCTAssertEqual(queue.pendingCount, 1)
    XCTAssertEqual(queue.boundDrainCountForTesting, 0, "1000 objects in one value are one entry")

    var object: Probe? = Probe { _ in deinits.update { $0 += 1 } }
    queue.releaseInBackground(&object)
    XCTAssertEqual(queue.pendingCount, 2)
    XCTAssertEqual(queue.boundDrainCountForTesting, 1, "the value and the object reach 2")
    target.resume()
    target.sync {}
    XCTAssertEqual(deinits.value, 1001)
  }

  /// `isPending` speaks of objects handed over themselves: an element of a queued array is
  /// not pending, a class instance passed through generic code (the value overload) is.
  func testAClassInstanceThroughGenericCodeGoesInAsItselfAndElementsAreNotPending() {
    let queue = DeallocQueue(label: "values", delay: .seconds(3600))
    let object = Probe { _ in }
    var handed: Probe? = object
    handOver(&handed, to: queue)
    XCTAssertNil(handed)
    XCTAssertTrue(queue.isPending(object), "a class instance was boxed")

    let element = Probe { _ in }
    var array: [Probe]? = [element]
    queue.releaseInBackground(&array)
    XCTAssertFalse(queue.isPending(element))
    XCTAssertEqual(queue.pendingCount, 2)
    queue.drain()
  }

  /// A class-bound existential is two words, not a reference: generic code boxes it rather
  /// than reading it as one.
  func testAClassBoundExistentialThroughGenericCodeIsReleasedOnce() {
    let queue = DeallocQueue(label: "values", delay: .seconds(3600))
    let deinits = Observed(0)
    var handed: (any ClassBound)? = CountedClassBound { deinits.update { $0 += 1 } }
    handOver(&handed, to: queue)
    XCTAssertNil(handed)
    XCTAssertEqual(deinits.value, 0)
    queue.drain()
    XCTAssertEqual(deinits.value, 1)
  }

  /// Generic code: only the value overload applies, whatever `T` is at run time.
  private func handOver<T>(_ value: inout T?, to queue: DeallocQueue) {
    queue.releaseInBackground(&value)
  }
}

/// A queue bounded at one entry whose drains run on a serial target held suspended, and the
/// probes whose `deinit`s note whether they ran on that target.
private struct TargetedQueue {
  let target = DispatchQueue(label: "value-target")
  let queue: DeallocQueue
  /// One entry per `deinit`: whether it ran inside a block of `target`.
  let deinitsOnTarget = Observed<[Bool]>([])
  private let marker = TargetMarker()

  init() {
    target.suspend()
    queue = DeallocQueue(label: "values", delay: .seconds(3600), target: target, maxPending: 1)
    marker.mark(target)
  }

  func probes(_ count: Int) -> [Probe] {
    (0..<count).map { _ in
      Probe { [deinitsOnTarget, marker] _ in
        let onTarget = marker.isOnMarkedQueue
        deinitsOnTarget.update { $0.append(onTarget) }
      }
    }
  }

  func assertHandedOver(
    variableIsNil: Bool, releasing count: Int, file: StaticString = #filePath, line: UInt = #line
  ) {
    XCTAssertTrue(variableIsNil, "the variable still holds the value", file: file, line: line)
    XCTAssertEqual(deinitsOnTarget.value, [], "freed during the call", file: file, line: line)
    XCTAssertEqual(queue.pendingCount, 1, "one entry per value", file: file, line: line)
    XCTAssertEqual(queue.boundDrainCountForTesting, 1, file: file, line: line)
    target.resume()
    target.sync {}  // after the bound's drain, which the hand-over dispatched first
    XCTAssertEqual(queue.pendingCount, 0, file: file, line: line)
    XCTAssertEqual(
      deinitsOnTarget.value, Array(repeating: true, count: count),
      "every object freed once, on the queue's target", file: file, line: line)
  }
}

/// Tells whether code runs on one dispatch queue, through a queue-specific value.
private final class TargetMarker: Sendable {
  private let key = DispatchSpecificKey<Bool>()

  func mark(_ queue: DispatchQueue) {
    queue.setSpecific(key: key, value: true)
  }

  var isOnMarkedQueue: Bool {
    DispatchQueue.getSpecific(key: key) == true
  }
}

/// Hashable by identity, so that a `Set` holds its probes.
private final class HashableProbe: Hashable {
  let probe: Probe

  init(_ probe: Probe) {
    self.probe = probe
  }

  static func == (lhs: HashableProbe, rhs: HashableProbe) -> Bool { lhs === rhs }
  func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

private struct Screen {
  var cells: [Probe]
  var headers: [Probe]
}

private enum Slot {
  case filled(Probe)
  case empty
}

private protocol ClassBound: AnyObject {}

private final class CountedClassBound: ClassBound {
  let onDeinit: @Sendable () -> Void
  init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
  deinit { onDeinit() }
}
