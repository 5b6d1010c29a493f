import DeallocLog

/// Groups late objects that have a holders record into ``LateHeldGroup``s, by the same
/// signature as findings (type, signature frames, holder key), keeping a few examples.
///
/// Bounded: at most ``maximumGroups`` groups are kept, with at most `maximumExamples`
/// examples each; members of groups beyond the cap are counted in ``omitted``, never
/// silently dropped.
package struct LateHeldCollector {
  /// Groups kept (and listed by the renderers that list them all).
  package static let maximumGroups = 20
  var maximumExamples = 5
  private var groups: [String: Int] = [:]
  private(set) var kept: [LateHeldGroup] = []
  /// Late objects with a holders record in groups beyond ``maximumGroups``.
  private(set) var omitted = 0

  mutating func add(_ signature: Signature, stack: [Frame], _ example: LateHeldExample) {
    let key = signature.key
    if let index = groups[key] {
      kept[index].count += 1
      if kept[index].examples.count < maximumExamples { kept[index].examples.append(example) }
      return
    }
    guard kept.count < Self.maximumGroups else {
      omitted += 1
      return
    }
    groups[key] = kept.count
    kept.append(
      LateHeldGroup(
        signature: signature, stack: stack, holders: example.holders, count: 1,
        examples: [example]))
  }

  /// The largest group first, then the first seen.
  func sorted() -> [LateHeldGroup] {
    kept.enumerated().sorted { a, b in
      a.element.count != b.element.count ? a.element.count > b.element.count : a.offset < b.offset
    }.map(\.element)
  }
}
