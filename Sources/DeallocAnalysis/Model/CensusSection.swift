import DeallocLog

/// The whole-process leak censuses a log holds (`census` records): the report's section
/// "Leaks in the whole process", the JSON report's `census`, and `check`'s
/// `--max-process-leaks`.
///
/// Why the last census decides: a census sees every object alive at its moment, so the
/// last one (the exit census, when the program ran with `DEALLOCTRACE_LEAKS=1`) holds every
/// leak the earlier ones saw that was never freed; the earlier ones are checkpoints, listed
/// for what they counted. A log of several sessions (the processes `dealloctrace run`
/// recorded) has one last census per session: each counts, and the one with the most program
/// leaks is the one shown.
public struct CensusSection: Sendable, Equatable {
  /// The censuses read, in log order: the first ``maximumKept``.
  public var censuses: [CensusRecord] = []
  /// Censuses read beyond ``maximumKept``; the last one read is always kept as ``final``.
  public var omitted = 0
  /// The census whose groups are shown as the process's leaks: the last one read, or with
  /// several sessions, the session's last census with the most program leak groups.
  public var final: CensusRecord?
  /// The last census of each session that held one, in log order.
  private var sessionFinals: [CensusRecord] = []
  private var sessionHasCensus = false

  public static let maximumKept = 64

  public init() {}

  /// Starts the next session: its censuses replace none of the previous session's.
  mutating func beginSession() { sessionHasCensus = false }

  /// Whether the log held any census.
  public var isEmpty: Bool { final == nil }

  mutating func add(_ record: CensusRecord, libraryModules: [Glob] = []) {
    var census = record
    CensusLibraries.mark(&census, modules: libraryModules)
    if censuses.count < Self.maximumKept {
      censuses.append(census)
    } else {
      omitted += 1
    }
    if sessionHasCensus {
      sessionFinals[sessionFinals.count - 1] = census
    } else {
      sessionFinals.append(census)
      sessionHasCensus = true
    }
    // `max(by:)` keeps the first of equal ones: over the reversed list, the latest.
    final = sessionFinals.reversed().max {
      Self.programLeakGroups(in: $0) < Self.programLeakGroups(in: $1)
    }
  }

  /// The types whose live count rose at every census of one label, for each label with at
  /// least ``minimumCheckpoints`` censuses: memory a program still reaches but only ever adds
  /// to (a cache, an observer list). Only types in every census's `live` list (the 200 most
  /// numerous) are compared.
  public var growing: [GrowingType] {
    var byLabel: [String: [CensusRecord]] = [:]
    var labels: [String] = []
    for census in censuses where census.error == nil {
      if byLabel[census.label] == nil { labels.append(census.label) }
      byLabel[census.label, default: []].append(census)
    }
    var result: [GrowingType] = []
    for label in labels {
      guard let series = byLabel[label], series.count >= Self.minimumCheckpoints,
        let last = series.last
      else { continue }
      for entry in last.live {
        let counts = series.map { census in
          census.live.first { $0.type == entry.type }?.count ?? 0
        }
        guard zip(counts, counts.dropFirst()).allSatisfy({ $0 < $1 }) else { continue }
        let instance = last.growing.first { $0.type == entry.type }
        result.append(
          GrowingType(label: label, type: entry.type, counts: counts, instance: instance))
      }
    }
    return result.sorted { ($0.growthPerCheckpoint, $1.type) > ($1.growthPerCheckpoint, $0.type) }
  }

  /// How many censuses of one label it takes to call a type growing.
  public static let minimumCheckpoints = 3

  /// The program's leak groups in the final census (every instance of each finding), plus
  /// the findings it summed without listing when its listed ones are all the program's:
  /// what `--max-process-leaks` counts. Library leaks never count.
  public var programLeakGroups: Int {
    sessionFinals.reduce(0) { $0 + Self.programLeakGroups(in: $1) }
  }

  /// The program's leak groups of every session's last census, one per finding id, in
  /// order of first appearance, with the instances, objects and bytes of all of them summed:
  /// what the gate judges and a baseline records. The same leak in an XCTest process and in
  /// a Swift Testing process is one finding seen twice, not two findings, and no session's
  /// leak is counted without being listed (and so without a baseline able to cover it).
  public var programGroups: [CensusGroup] {
    var merged: [CensusGroup] = []
    var position: [String: Int] = [:]
    for census in sessionFinals {
      for group in census.programGroups {
        guard let index = position[group.id] else {
          position[group.id] = merged.count
          merged.append(group)
          continue
        }
        merged[index].instances += group.instances
        merged[index].count += group.count
        merged[index].bytes += group.bytes
      }
    }
    return merged
  }

  private static func programLeakGroups(in census: CensusRecord) -> Int {
    let listed = census.programGroups.reduce(0) { $0 + $1.instances }
    let unlisted = census.unlistedAreLibrary ? 0 : census.moreFindings
    return listed + unlisted
  }
}

/// A type whose live count rose at every census of one label.
public struct GrowingType: Sendable, Equatable {
  public var label: String
  public var type: String
  /// Its live count at each census of the label, in order.
  public var counts: [Int]
  /// One of its instances at the last census of the label, with what held it, when the
  /// recorder picked one (the record's `growing`).
  public var instance: CensusGrowingInstance? = nil

  /// The average growth from one census of the label to the next.
  public var growthPerCheckpoint: Double {
    guard let first = counts.first, let last = counts.last, counts.count > 1 else { return 0 }
    return Double(last - first) / Double(counts.count - 1)
  }

  /// `CacheEntry: 10 → 20 → 30 → 40 (+10 per "iteration")`.
  public var text: String {
    let growth = growthPerCheckpoint
    let step = growth == growth.rounded() ? String(Int(growth)) : String(growth)
    return "\(type): " + counts.map(String.init).joined(separator: " → ")
      + " (+\(step) per \"\(label)\")"
  }

  /// What held one of its newest instances, under ``text`` (indented by two spaces): which
  /// instance, then its holder path as every report shows one (``HolderPathText``), its
  /// allocation stack listed by `listing`.
  public func instanceLines(listing: StackLines = .callers) -> [String] {
    guard let instance, let holders = instance.holders else { return [] }
    let which =
      instance.isNew
      ? "one of the newest (not there at the previous \"\(label)\"), at the last one:"
      : "one of them (its age unknown: too many to compare), at the last \"\(label)\":"
    return ["  " + which]
      + HolderPathText.lines(holders, type: type, address: instance.object, listing: listing)
      .map { "    " + $0 }
  }
}
