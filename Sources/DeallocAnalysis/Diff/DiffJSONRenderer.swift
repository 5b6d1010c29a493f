/// `dealloctrace diff` as one JSON object, for scripts (version 1; members may be added,
/// never removed or changed without raising `diffVersion`).
///
/// Shape: `diffVersion`, `tool`, `hasNewFindings`, `base` and `head` (`inputs`,
/// `savedReport`, `findings`, `falseLeaks`: counts), `new` and `gone` (entries in the
/// baseline file's shape), `changed` (`id`, `kind`, `type`, `frames`, `baseCount`,
/// `headCount`), `unchangedCount`, and `falseLeaks` (`appeared`, `disappeared`: `label`,
/// `type`, `baseCount`, `headCount`).
public struct DiffJSONRenderer: Sendable {
  public static let diffVersion = 1

  public init() {}

  public func render(_ diff: FindingsDiff) -> String {
    document(diff).serialized(pretty: true) + "\n"
  }

  public func document(_ diff: FindingsDiff) -> JSONValue {
    .object([
      ("diffVersion", .int(Self.diffVersion)),
      ("tool", .string("dealloctrace \(DeallocAnalysis.toolVersion)")),
      ("hasNewFindings", .bool(diff.hasNewFindings)),
      ("base", Self.side(diff.base)),
      ("head", Self.side(diff.head)),
      ("new", .array(diff.new.map(\.json))),
      ("gone", .array(diff.gone.map(\.json))),
      ("changed", .array(diff.changed.map(Self.change))),
      ("unchangedCount", .int(diff.unchanged.count)),
      (
        "falseLeaks",
        .object([
          ("appeared", .array(diff.falseLeaksAppeared.map(Self.falseLeak))),
          ("disappeared", .array(diff.falseLeaksDisappeared.map(Self.falseLeak))),
        ])
      ),
    ])
  }

  static func side(_ side: DiffSide) -> JSONValue {
    .object([
      ("inputs", .array(side.inputs.map { .string($0) })),
      ("savedReport", .bool(side.isSavedReport)),
      ("findings", .int(side.findings.count)),
      ("falseLeaks", .int(side.falseLeaks.values.reduce(0, +))),
    ])
  }

  static func change(_ change: FindingsDiff.CountChange) -> JSONValue {
    .object([
      ("id", .string(change.head.id.hex)),
      ("kind", .string(change.head.kind.rawValue)),
      ("type", .string(change.head.type)),
      ("frames", .array(change.head.frames.map { .string($0) })),
      ("baseCount", .int(change.base.count)),
      ("headCount", .int(change.head.count)),
    ])
  }

  static func falseLeak(_ change: FindingsDiff.FalseLeakChange) -> JSONValue {
    .object([
      ("label", .string(change.key.label)),
      ("type", .string(change.key.type)),
      ("baseCount", .int(change.base)),
      ("headCount", .int(change.head)),
    ])
  }
}
