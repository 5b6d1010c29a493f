import DeallocQueue
import TestSupport
import XCTest

/// Swift 6 callers in isolated contexts hand non-`Sendable` values and objects to the queue:
/// locals and the isolated stored properties that a screen or a store lets go of. What is
/// checked is that this file compiles in Swift 6 language mode with warnings as errors (the
/// strict build); the tests then check that the hand-overs happened.
final class IsolatedCallerTests: XCTestCase {
  @MainActor
  func testMainActorCodeHandsOverValuesAndObjects() {
    let queue = DeallocQueue(label: "main-actor", delay: .seconds(3600))
    let deinits = Observed(0)
    let screen = ScreenController(counting: deinits)
    screen.close(on: queue)
    var unused: [Probe]? = [Probe { _ in }]
    performBackgroundDeallocation(&unused)  // the shared queue, from the main actor
    XCTAssertNil(unused)
    XCTAssertNil(screen.cells)
    XCTAssertNil(screen.layout)
    XCTAssertNil(screen.header)
    XCTAssertEqual(queue.pendingCount, 4)
    XCTAssertEqual(deinits.value, 0)
    queue.drain()
    XCTAssertEqual(deinits.value, 7)
  }

  func testActorCodeHandsOverValuesAndObjects() async {
    let queue = DeallocQueue(label: "actor", delay: .seconds(3600))
    let deinits = Observed(0)
    let store = CellStore(counting: deinits)
    let emptied = await store.close(on: queue)
    XCTAssertTrue(emptied)
    XCTAssertEqual(queue.pendingCount, 3)
    XCTAssertEqual(deinits.value, 0)
    queue.drain()
    XCTAssertEqual(deinits.value, 5)
  }
}

/// A screen's state, isolated to the main actor and not `Sendable`.
@MainActor
private final class ScreenController {
  var cells: [Probe]?
  var layout: Layout?
  var header: Probe?
  private let deinits: Observed<Int>

  init(counting deinits: Observed<Int>) {
    self.deinits = deinits
    cells = [counted(), counted()]
    layout = Layout(rows: [counted()], columns: [counted()])
    header = counted()
  }

  func close(on queue: DeallocQueue) {
    queue.releaseInBackground(&cells)
    queue.releaseInBackground(&layout)
    queue.releaseInBackground(&header)
    var footer: [Probe]? = [counted(), counted()]
    queue.releaseInBackground(&footer)
  }

  private func counted() -> Probe {
    Probe { [deinits] _ in deinits.update { $0 += 1 } }
  }
}

/// A store isolated to an actor of its own.
private actor CellStore {
  private var cells: [Int: Probe]?
  private var current: Probe?
  private let deinits: Observed<Int>

  init(counting deinits: Observed<Int>) {
    self.deinits = deinits
    cells = [
      1: Probe { _ in deinits.update { $0 += 1 } }, 2: Probe { _ in deinits.update { $0 += 1 } },
    ]
    current = Probe { _ in deinits.update { $0 += 1 } }
  }

  /// Hands everything to `queue`; whether the store is empty afterwards.
  func close(on queue: DeallocQueue) -> Bool {
    queue.releaseInBackground(&cells)
    queue.releaseInBackground(&current)
    let deinits = deinits
    var slot: Slot? = .filled(
      Probe { _ in deinits.update { $0 += 1 } }, Probe { _ in deinits.update { $0 += 1 } })
    queue.releaseInBackground(&slot)
    var unused: [Probe]? = [Probe { _ in }]
    performBackgroundDeallocation(&unused)  // the shared queue, from the actor
    return cells == nil && current == nil && slot == nil && unused == nil
  }
}

private struct Layout {
  var rows: [Probe]
  var columns: [Probe]
}

private enum Slot {
  case filled(Probe, Probe)
}
