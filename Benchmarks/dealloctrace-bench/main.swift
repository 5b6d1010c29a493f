import Glibc

// dealloctrace-bench: prints one JSON object of figures, each with the floor or peer it is
// compared with, measured in the same run. Build with `-c release`.
//
//   swift run -c release dealloctrace-bench            every group
//   swift run -c release dealloctrace-bench tracing    only the named groups (queue, tracing,
//                                                      memory, holders, alloc-stacks, history,
//                                                      census,
//                                                      report, shapes, report-large), e.g. to
//                                                      profile one

let groups: [(name: String, run: (inout BenchFigures) -> Void)] = [
  ("queue", queueFigures(into:)),
  ("tracing", tracingFigures(into:)),
  ("memory", recorderMemoryFigures(into:)),
  ("holders", holderFigures(into:)),
  ("alloc-stacks", allocationStackFigures(into:)),
  ("history", historyFigures(into:)),
  ("census", censusFigures(into:)),
  ("report", reportFigures(into:)),
  ("shapes", shapeFigures(into:)),
  ("report-large", largeReportFigures(into:)),
]

//   dealloctrace-bench --write-log SHAPE OBJECTS PATH
//                                                      writes a generated log (clean,
//                                                      leak-heavy, never-released) to
//                                                      profile the CLI on

if CommandLine.arguments.dropFirst().first == "--write-log", CommandLine.arguments.count == 5,
  let shape = [LogShape.clean, .leakHeavy, .neverReleased].first(where: {
    $0.description == CommandLine.arguments[2]
  }), let objects = Int(CommandLine.arguments[3])
{
  print(shape.write(objects: objects, at: CommandLine.arguments[4]))
  exit(0)
}

if CommandLine.arguments.dropFirst().first == allocationStackChildArgument {
  allocationStackChild()  // a child of `allocationStackFigures`
  exit(0)
}
if CommandLine.arguments.dropFirst().first == recorderWorkloadArgument {
  recorderWorkload()  // a child of `recorderMemoryFigures`
  exit(0)
}
if CommandLine.arguments.dropFirst().first == reportChildArgument,
  CommandLine.arguments.count == 3
{
  reportChild(CommandLine.arguments[2])  // a child of `reportFigures` and `largeReportFigures`
  exit(0)
}
if CommandLine.arguments.dropFirst().first == censusChildArgument,
  let objects = CommandLine.arguments.dropFirst(2).first.flatMap({ Int($0) })
{
  censusChild(objects)  // a child of `censusFigures`
  exit(0)
}
if CommandLine.arguments.dropFirst().first == historyChildArgument {
  historyChild()  // a child of `historyFigures`
  exit(0)
}
if CommandLine.arguments.dropFirst().first == holderChildArgument {
  holderChild(CommandLine.arguments.dropFirst(2).first ?? "")  // a child of `holderFigures`
  exit(0)
}

let wanted = Set(CommandLine.arguments.dropFirst())
if let unknown = wanted.first(where: { name in !groups.contains { $0.name == name } }) {
  print(
    "dealloctrace-bench: unknown group '\(unknown)'; groups: \(groups.map(\.name).joined(separator: ", "))"
  )
  exit(2)
}
var figures = BenchFigures()
for group in groups where wanted.isEmpty || wanted.contains(group.name) {
  group.run(&figures)
}
print(figures.json())
