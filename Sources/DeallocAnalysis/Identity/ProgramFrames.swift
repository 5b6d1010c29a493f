import DeallocLog

/// The names of a signature's frames that belong to the program, both ways an id has taken
/// them (``SymbolNormalization/programFrameNames(_:)``): worked out once where a finding's
/// signature is made, for its grouping key and its ids, so that neither judges the frames
/// again.
struct ProgramFrames: Sendable, Equatable {
  /// What the current id rule hashes and findings are grouped by: the test function left out
  /// when a program frame lies inside it.
  let names: [String]
  /// What rule 2 hashed (``FindingID/ruleTwo(kind:type:symbols:)``): the test function kept.
  let namesWithTheTest: [String]

  /// The program frames of signature frames `frames`, innermost first.
  init(_ frames: [Frame]) {
    (names, namesWithTheTest) = SymbolNormalization.programFrameNames(
      frames.map(FindingID.stableName))
  }
}
