/// Reads a `census` record (docs/log-format.md) from the line ``RecordParser`` recognised.
///
/// Why a tree and not the flat field table: a census is the log's most nested record
/// (groups of members, edges and tree lines), and a log holds a handful of them, so reading
/// it into a small value tree first costs nothing that matters and keeps each field's rule
/// in one place. Nesting is bounded (``maximumDepth``), every list is capped
/// (``CensusRecord/Limits``), and a wrong type is a failure naming the field.
enum CensusRecordParser {
  typealias Failure = JSONScanner.Failure

  /// Packed `"census"` (see ``JSONScanner/pack(_:)``).
  static let kind: UInt64 = 0x7375_736e_6563

  static let maximumDepth = 6

  indirect enum Value {
    case object([(String, Value)])
    case array([Value])
    case string(String)
    case integer(Int64)
    case number(Double)
    case bool(Bool)
    case null
    /// A `holders` member: a HOLDERS-VALUE, read by its own parser.
    case holders(HolderReport)

    subscript(key: String) -> Value? {
      guard case .object(let members) = self else { return nil }
      return members.first { $0.0 == key }?.1
    }

    var string: String? {
      if case .string(let text) = self { return text }
      return nil
    }

    var array: [Value] {
      if case .array(let values) = self { return values }
      return []
    }
  }

  static func parse(_ scanner: JSONScanner) throws(Failure) -> CensusRecord {
    var s = scanner
    s.index = 0
    let root = try value(&s, depth: 0)
    var record = CensusRecord(
      time: try time(root["t"]), label: root["label"]?.string ?? "")
    record.error = root["error"]?.string
    record.objects = try count(root["objects"], "objects")
    record.bytes = try count(root["bytes"], "bytes")
    record.leaked = try count(root["leaked"], "leaked")
    record.leakedBytes = try count(root["leaked_bytes"], "leaked_bytes")
    record.libraryLeaked = try count(root["library_leaked"], "library_leaked")
    record.libraryLeakedBytes = try count(root["library_leaked_bytes"], "library_leaked_bytes")
    record.delayedObjects = try count(root["delayed_objects"], "delayed_objects")
    record.threadsStopped = try count(root["threads_stopped"], "threads_stopped")
    record.threadsUnstopped = try count(root["threads_unstopped"], "threads_unstopped")
    if let microseconds = root["census_us"] {
      record.microseconds = try count(microseconds, "census_us")
    }
    if let counts = root["allocStacks"] {
      record.allocationStacks = AllocationStackCounts(
        recorded: try count(counts["recorded"], "recorded"),
        dropped: try count(counts["dropped"], "dropped"),
        objects: try count(counts["objects"], "objects"),
        sampleEvery: max(1, try count(counts["sampleEvery"], "sampleEvery")))
    }
    let groups = root["groups"]?.array ?? []
    for group in groups.prefix(CensusRecord.Limits.groups) {
      record.groups.append(try self.group(group))
    }
    // The recorder lists the program's findings first: unlisted ones are the libraries'
    // only when the listed ones reached them.
    record.unlistedAreLibrary = record.groups.last?.library == true
    let sampleEvery = record.allocationStacks?.sampleEvery ?? 1
    for index in record.groups.indices { record.groups[index].allocationSampleEvery = sampleEvery }
    for dropped in groups.dropFirst(CensusRecord.Limits.groups) {
      record.moreFindings += 1
      record.moreObjects += try count(dropped["count"], "count")
      record.moreBytes += try count(dropped["bytes"], "bytes")
    }
    if let more = root["more"] {
      record.moreFindings += try count(more["findings"], "findings")
      record.moreObjects += try count(more["count"], "count")
      record.moreBytes += try count(more["bytes"], "bytes")
    }
    for queue in (root["delayed"]?.array ?? []).prefix(CensusRecord.Limits.queues) {
      record.delayed.append(
        CensusQueue(
          queue: queue["q"]?.string ?? "", count: try count(queue["count"], "count"),
          bytes: try count(queue["bytes"], "bytes"),
          types: try typeCounts(queue["types"], CensusRecord.Limits.membersPerGroup)))
    }
    record.live = try typeCounts(root["live"], CensusRecord.Limits.types)
    for entry in (root["growing"]?.array ?? []).prefix(CensusRecord.Limits.types) {
      record.growing.append(growingInstance(entry))
    }
    return record
  }

  private static func group(_ value: Value) throws(Failure) -> CensusGroup {
    guard let text = value["id"]?.string else { throw Failure("census group without 'id'") }
    let id = CensusGroup.readableID(text)
    let kind = CensusGroup.Kind(rawValue: value["kind"]?.string ?? "") ?? .leak
    var edges: [CensusEdge] = []
    for edge in (value["edges"]?.array ?? []).prefix(CensusRecord.Limits.edgesPerGroup) {
      edges.append(
        CensusEdge(type: edge["type"]?.string ?? "?", field: edge["field"]?.string ?? ""))
    }
    var tree: [CensusTreeLine] = []
    for line in (value["tree"]?.array ?? []).prefix(CensusRecord.Limits.treeLines) {
      var back = false
      if case .bool(let flag) = line["back"] { back = flag }
      var object: Address?
      if let text = line["obj"]?.string, text.hasPrefix("0x"),
        let raw = UInt64(text.dropFirst(2), radix: 16)
      {
        object = Address(raw)
      }
      tree.append(
        CensusTreeLine(
          depth: min(try count(line["depth"], "depth"), 1_000), type: line["type"]?.string ?? "?",
          object: object, size: try count(line["size"], "size"), via: line["via"]?.string,
          back: back, count: try count(line["count"], "count"),
          bytes: try count(line["bytes"], "bytes")))
    }
    var library = false
    if case .bool(let flag) = value["library"] { library = flag }
    return CensusGroup(
      id: id, kind: kind, instances: max(1, try count(value["instances"], "instances")),
      count: try count(value["count"], "count"), bytes: try count(value["bytes"], "bytes"),
      library: library,
      members: try typeCounts(value["members"], CensusRecord.Limits.membersPerGroup),
      edges: edges, tree: tree, allocationStack: try frames(value["allocStack"]))
  }

  /// An `allocStack`: frames as a `stack` record writes them (`ip`, `mod`, `off`, `sym`).
  private static func frames(_ value: Value?) throws(Failure) -> [Frame] {
    var frames: [Frame] = []
    for entry in (value?.array ?? []).prefix(CensusRecord.Limits.allocationFrames) {
      guard let ip = hex(entry["ip"]) else {
        throw Failure("census 'allocStack' frame without 'ip'")
      }
      frames.append(
        Frame(
          ip: ip, module: entry["mod"]?.string, offset: hex(entry["off"]),
          symbol: entry["sym"]?.string))
    }
    return frames
  }

  /// A `"0x…"` string's value.
  private static func hex(_ value: Value?) -> UInt64? {
    guard let text = value?.string, text.hasPrefix("0x") else { return nil }
    return UInt64(text.dropFirst(2), radix: 16)
  }

  private static func growingInstance(_ entry: Value) -> CensusGrowingInstance {
    var object: Address?
    if let text = entry["obj"]?.string, text.hasPrefix("0x"),
      let raw = UInt64(text.dropFirst(2), radix: 16)
    {
      object = Address(raw)
    }
    var isNew = false
    if case .bool(let flag) = entry["new"] { isNew = flag }
    var holders: HolderReport?
    if case .holders(let report) = entry["holders"] { holders = report }
    return CensusGrowingInstance(
      type: entry["type"]?.string ?? "?", object: object, isNew: isNew, holders: holders)
  }

  private static func typeCounts(_ value: Value?, _ limit: Int) throws(Failure)
    -> [CensusTypeCount]
  {
    var result: [CensusTypeCount] = []
    for entry in (value?.array ?? []).prefix(limit) {
      result.append(
        CensusTypeCount(
          type: entry["type"]?.string ?? "?", count: try count(entry["count"], "count"),
          bytes: try count(entry["bytes"], "bytes")))
    }
    return result
  }

  /// A count within ``LogLimits/counts``; 0 when absent.
  private static func count(_ value: Value?, _ name: String) throws(Failure) -> Int {
    guard let value else { return 0 }
    guard case .integer(let number) = value, number >= 0, number <= LogLimits.maximumCount
    else { throw Failure("census '\(name)' is not a count (0 to 2^48)") }
    return Int(number)
  }

  private static func time(_ value: Value?) throws(Failure) -> Int64 {
    guard case .integer(let t) = value else { throw Failure("census record without 't'") }
    guard t >= 0 && t <= LogLimits.maximumTime else {
      throw Failure("'t' is out of range (0 to 2^60 ns since the session's start)")
    }
    return t
  }

  private static func value(_ s: inout JSONScanner, depth: Int) throws(Failure) -> Value {
    guard depth <= maximumDepth else { throw Failure("census record nested too deeply") }
    s.skipWhitespace()
    switch s.peek() {
    case UInt8(ascii: "{"):
      _ = s.consume(UInt8(ascii: "{"))
      var members: [(String, Value)] = []
      if s.consume(UInt8(ascii: "}")) { return .object(members) }
      repeat {
        let raw = try s.readRawString()
        let key = try s.decodeString(start: raw.start, count: raw.count, escaped: raw.escaped)
        try s.expect(UInt8(ascii: ":"), "':'")
        s.skipWhitespace()
        if key == "holders" && s.peek() == UInt8(ascii: "{") {
          members.append((key, .holders(try HolderValueParser.value(&s))))
          continue
        }
        members.append((key, try value(&s, depth: depth + 1)))
      } while s.consume(UInt8(ascii: ","))
      try s.expect(UInt8(ascii: "}"), "',' or '}'")
      return .object(members)
    case UInt8(ascii: "["):
      _ = s.consume(UInt8(ascii: "["))
      var values: [Value] = []
      if s.consume(UInt8(ascii: "]")) { return .array(values) }
      repeat {
        values.append(try value(&s, depth: depth + 1))
      } while s.consume(UInt8(ascii: ","))
      try s.expect(UInt8(ascii: "]"), "',' or ']'")
      return .array(values)
    case UInt8(ascii: "\""):
      return .string(try s.readString())
    case UInt8(ascii: "t"), UInt8(ascii: "f"):
      return .bool(try s.readBool())
    case UInt8(ascii: "n"):
      guard s.consumeNull() else { throw Failure("census record: a bad literal") }
      return .null
    default:
      let start = s.index
      if let integer = try? s.readInteger() { return .integer(integer) }
      s.index = start
      return .number(try s.readNumber())
    }
  }
}
