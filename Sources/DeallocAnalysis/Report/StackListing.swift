import DeallocLog

/// What an output lists of a stack: the program's frames first, then one line for the test
/// framework's, libdispatch's, the runtime's and the compiler's frames (plumbing) around
/// them, such as "… 14 frames of XCTest and libdispatch"; or, with `--all-frames`, every
/// frame as recorded.
///
/// Why: a leak found by a test has a dozen frames of XCTest and libdispatch under the two
/// that matter, and they pushed the program's frames past each output's frame limit. The
/// frames folded are those a finding's id leaves out (``SymbolNormalization``): one rule
/// for which frames are the program's. The queue's and the tracer's own frames, where every
/// enqueue stack starts, are left out as before (``Frame/isMachinery``).
struct StackListing: Equatable {
  /// The frames shown, innermost first.
  var frames: [Frame]
  /// The program's frames past the limit.
  var omitted = 0
  /// How many plumbing frames were folded, and what they belong to (in ``PlumbingCategory``
  /// order).
  var folded = 0
  var categories: [PlumbingCategory] = []

  /// `stack` listed: its program frames (after the leading machinery), at most `limit`,
  /// then its plumbing folded; with `allFrames`, every frame and nothing folded.
  init(_ stack: [Frame], limit: Int, allFrames: Bool) {
    guard !allFrames else {
      frames = stack
      return
    }
    var program: [Frame] = []
    var categories = Set<PlumbingCategory>()
    for frame in stack.drop(while: { Signature.isMachinery($0) }) {
      if let category = Self.category(frame) {
        folded += 1
        categories.insert(category)
      } else {
        program.append(frame)
      }
    }
    frames = Array(program.prefix(limit))
    omitted = max(0, program.count - limit)
    self.categories = categories.sorted()
  }

  /// What a frame belongs to when it is plumbing, by the id rule's name for it.
  static func category(_ frame: Frame) -> PlumbingCategory? {
    SymbolNormalization.plumbingCategory(FindingID.stableName(of: frame))
  }

  /// "… 3 more frames", or `nil` when none was left out.
  var omittedLine: String? {
    omitted > 0 ? "… \(omitted) more frames" : nil
  }

  /// "… 14 frames of XCTest and libdispatch", or `nil` when nothing was folded.
  var foldedLine: String? {
    guard folded > 0 else { return nil }
    let names = categories.map(\.name)
    let list =
      names.count == 1
      ? names[0] : names.dropLast().joined(separator: ", ") + " and " + names.last!
    return "… \(RenderingSupport.plural(folded, "frame")) of \(list)"
  }

  /// The lines after the frames: ``omittedLine`` and ``foldedLine``, those that apply.
  var trailingLines: [String] { [omittedLine, foldedLine].compactMap { $0 } }
}
