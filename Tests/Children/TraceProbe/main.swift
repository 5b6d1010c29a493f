// TraceProbe: a small traced program that the tracing tests run as a child process.
//
// Run it with `DEALLOCTRACE_LOG=PATH` (the scenario turns tracing on with no code change)
// or with `--explicit PATH` (through `DeallocTrace.start(path:)`). Its first argument picks
// a mode; see `ProbeMode`.

import DeallocQueue
import DeallocTrace
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
let mode = ProbeMode(rawValue: arguments.first ?? "scenario") ?? .scenario

switch mode {
case .scenario:
  runScenario()
case .explicit:
  let path = arguments.count > 1 ? arguments[1] : "trace-probe.jsonl"
  do {
    try DeallocTrace.start(path: path)
  } catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
  }
  runScenario()
  DeallocTrace.finish()
  // A second session in the same file: `start` after `finish` works.
  do {
    try DeallocTrace.start(path: path, frames: 4)
    DeallocTrace.mark("second session")
    var late: FeedController? = FeedController()
    DeallocQueue.shared.releaseInBackground(&late)
    DeallocQueue.shared.drain()
  } catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
  }
  DeallocTrace.finish()
case .forever:
  runForever()
case .fork:
  runForkScenario()
case .timerSurvivor:
  runTimerSurvivor()
case .deleteLog:
  runDeletingLog()
case .lostAtFinish:
  runLostAtFinish(path: arguments.count > 1 ? arguments[1] : "trace-probe.jsonl")
case .idStraddle:
  runIDStraddle(
    first: arguments.count > 1 ? arguments[1] : "first.jsonl",
    second: arguments.count > 2 ? arguments[2] : "second.jsonl")
case .pendingAtExit:
  runPendingAtExit()
case .survivorRace:
  runSurvivorRace(path: arguments.count > 1 ? arguments[1] : "trace-probe.jsonl")
case .fillLog:
  runFillingLog()
case .descriptor:
  runDescriptorCheck()
case .unwinders:
  runUnwinderCheck()
case .holders:
  runHolderScenario(arguments.count > 1 ? arguments[1] : "")
case .holdersFromCode:
  runHoldersFromCode(
    how: arguments.count > 1 ? arguments[1] : "start",
    path: arguments.count > 2 ? arguments[2] : "trace-probe.jsonl")
case .holdersSurvival:
  runHolderSurvival()
case .values:
  runValueScenario()
case .localTypes:
  runLocalTypes()
case .bothEnds:
  runBothEnds()
case .history:
  runHistoryScenario(arguments.count > 1 ? arguments[1] : nil)
}
exit(Int32(ProcessInfo.processInfo.environment["TRACE_PROBE_EXIT"] ?? "0") ?? 0)
