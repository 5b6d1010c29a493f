import DeallocLog

/// The JSON report's `census` object (docs/report-format.md): the final census's `leaks`
/// (the program's) and `libraryLeaks`, its `delayed` objects by queue, and every census read
/// as a `checkpoints` entry. Written only when the log held a census, so reports of logs
/// without one keep their shape byte for byte.
enum CensusJSON {
  static func write<O: JSONOutput>(_ section: CensusSection, to o: inout O) {
    guard let final = section.final else { return }
    o.object { o in
      o.field("label", final.label)
      o.field("error", final.error)
      o.field("objects", final.objects)
      o.field("bytes", final.bytes)
      o.field("leakedObjects", final.leaked)
      o.field("leakedBytes", final.leakedBytes)
      o.field("libraryLeakedObjects", final.libraryLeaked)
      o.field("libraryLeakedBytes", final.libraryLeakedBytes)
      o.field("omittedFindings", final.moreFindings)
      o.key("leaks")
      o.array(final.programGroups) { group($1, to: &$0) }
      o.key("libraryLeaks")
      o.array(final.libraryGroups) { group($1, to: &$0) }
      o.key("libraries")
      libraries(final, to: &o)
      o.key("delayed")
      delayed(final, to: &o)
      o.field("threadsUnstopped", final.threadsUnstopped)
      o.field("censusMicroseconds", final.microseconds)
      o.key("checkpoints")
      checkpoints(section, to: &o)
      o.field("omittedCheckpoints", section.omitted)
      o.key("growing")
      growing(section, to: &o)
    }
  }

  private static func libraries<O: JSONOutput>(_ final: CensusRecord, to o: inout O) {
    o.array(CensusLibraries.byModule(final.libraryGroups)) { o, module in
      o.object { o in
        o.field("module", module.module)
        o.field("groups", module.groups)
        o.field("objects", module.objects)
        o.field("bytes", module.bytes)
      }
    }
  }

  private static func delayed<O: JSONOutput>(_ final: CensusRecord, to o: inout O) {
    o.array(final.delayed) { o, queue in
      o.object { o in
        o.field("queue", queue.queue)
        o.field("count", queue.count)
        o.field("bytes", queue.bytes)
        o.key("types")
        o.array(queue.types) { typeCount($1, to: &$0) }
      }
    }
  }

  private static func checkpoints<O: JSONOutput>(_ section: CensusSection, to o: inout O) {
    o.array(section.censuses) { o, census in
      o.object { o in
        o.field("label", census.label)
        o.field("timeNs", census.time)
        o.field("error", census.error)
        o.field("objects", census.objects)
        o.field("leakedObjects", census.leaked)
        o.field("leakedBytes", census.leakedBytes)
        o.field("delayedObjects", census.delayedObjects)
        o.key("live")
        o.array(census.live) { typeCount($1, to: &$0) }
      }
    }
  }

  private static func growing<O: JSONOutput>(_ section: CensusSection, to o: inout O) {
    o.array(section.growing) { o, type in
      o.object { o in
        o.field("label", type.label)
        o.field("type", type.type)
        o.key("counts")
        o.array(type.counts) { $0.int($1) }
        o.field("growthPerCheckpoint", Int(type.growthPerCheckpoint.rounded()))
        if let instance = type.instance, let holders = instance.holders {
          o.key("newest")
          o.object { o in
            o.field("obj", instance.object.map(\.description))
            o.field("new", instance.isNew)
            o.key("holders")
            JSONRenderer.holders(holders, to: &o)
          }
        }
      }
    }
  }

  private static func group<O: JSONOutput>(_ group: CensusGroup, to o: inout O) {
    o.object { o in
      o.field("id", group.id)
      o.field("kind", group.kind.rawValue)
      o.field("instances", group.instances)
      o.field("count", group.count)
      o.field("bytes", group.bytes)
      if group.library { o.field("library", CensusLibraries.library(of: group)) }
      o.key("members")
      o.array(group.members) { typeCount($1, to: &$0) }
      o.key("edges")
      o.array(group.edges) { o, edge in
        o.object { o in
          o.field("type", edge.type)
          o.field("field", edge.field)
        }
      }
      o.field("cycle", group.cycleText)
      o.key("tree")
      o.array(group.tree) { o, line in
        o.object { o in
          o.field("depth", line.depth)
          o.field("type", line.type)
          o.hexField("obj", line.object?.rawValue)
          o.field("size", line.size)
          o.field("via", line.via)
          o.field("back", line.back)
          o.field("count", line.count)
          o.field("bytes", line.bytes)
        }
      }
      o.key("allocStack")
      o.array(group.allocationStack) { JSONRenderer.frame($1, to: &$0) }
      // Only a sampled run's: reports of unsampled runs stay as they were.
      if group.allocationSampleEvery > 1 {
        o.field("allocSampleEvery", group.allocationSampleEvery)
      }
    }
  }

  private static func typeCount<O: JSONOutput>(_ entry: CensusTypeCount, to o: inout O) {
    o.object { o in
      o.field("type", entry.type)
      o.field("count", entry.count)
      o.field("bytes", entry.bytes)
    }
  }
}
