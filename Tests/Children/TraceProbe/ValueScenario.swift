import DeallocQueue

/// A feed's cell, held in the values the probe hands to the queue.
final class CellModel {}

/// A screen's sections: a struct whose fields are arrays of objects.
struct FeedSections {
  var cells: [CellModel]
  var headers: [CellModel]
}

/// Hands values to the queue (an array, a dictionary, a struct of arrays) and an object
/// beside them, then drains: each value's `enqueue` must name the value's type, with the
/// element count of the collections, and each `release` must free its box.
@inline(never)
func runValueScenario() {
  var cells: [CellModel]? = (0..<3).map { _ in CellModel() }
  DeallocQueue.shared.releaseInBackground(&cells)
  var cellsByID: [Int: CellModel]? = [1: CellModel(), 2: CellModel()]
  performBackgroundDeallocation(&cellsByID)
  var sections: FeedSections? = FeedSections(cells: [CellModel()], headers: [CellModel()])
  DeallocQueue.shared.releaseInBackground(&sections)
  var controller: FeedController? = FeedController()
  DeallocQueue.shared.releaseInBackground(&controller)
  DeallocQueue.shared.drain()
}
