import DeallocLog

/// The whole-process leak censuses a log holds (`census` records): the report's section
/// "Leaks in the whole process", the JSON report's `census`, and `check`'s
/// `--max-process-leaks`.
///
/// Why the last census decides: a census sees every object alive at its moment, so the
/// last one (the exit census, when the program ran with `DEALLOCTRACE_LEAKS=1`) holds every
/// leak the earlier ones saw that was never freed; the earlier ones are checkpoints, listed
/// for what they counted.
public struct CensusSection: Sendable, Equatable {
  /// The censuses read, in log order: the first ``maximumKept``.
  public var censuses: [CensusRecord] = []
  /// Censuses read beyond ``maximumKept``; the last one read is always kept as ``final``.
  public var omitted = 0
  /// The census whose groups are the process's leaks: the last one read.
  public var final: CensusRecord?

  public static let maximumKept = 64

  public init() {}

  /// Whether the log held any census.
  public var isEmpty: Bool { final == nil }

  mutating func add(_ census: CensusRecord) {
    if censuses.count < Self.maximumKept {
      censuses.append(census)
    } else {
      omitted += 1
    }
    final = census
  }

  /// The program's leak groups in the final census (every instance of each finding), plus
  /// the findings it summed without listing when its listed ones are all the program's:
  /// what `--max-process-leaks` counts. Library leaks never count.
  public var programLeakGroups: Int {
    guard let final else { return 0 }
    let listed = final.programGroups.reduce(0) { $0 + $1.instances }
    let unlisted = final.groups.last?.library == true ? 0 : final.moreFindings
    return listed + unlisted
  }
}
