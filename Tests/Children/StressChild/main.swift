// StressChild: the traced program the reliability tests run as a child process, so that
// the tracer's process-wide state starts clean and a crash or a fault stays in the child.
//
//   StressChild stress LOG [OBJECTS] [THREADS]   8 threads, 3 queues, drains and marks
//   StressChild heartbeat LOG                    enqueues and prints `beat N` until killed
//   StressChild workload FAULT EXIT_STATUS       tracing from DEALLOCTRACE_LOG; see WorkloadRun
//   StressChild feed [SCREENS] [CELLS]           FeedDemo's screen, repeated, for timings
//   StressChild hardening MODE …                 the recorder-hardening hosts; see HardeningRun
//   StressChild limited HEADROOM_MIB [holders]   a queue under an address-space limit; see LimitedRun
//   StressChild holder-memory                    a holder scan that runs out of memory

#if canImport(Glibc)
  import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())

func usage() -> Never {
  ChildOutput.error(
    "usage: StressChild stress LOG [OBJECTS] [THREADS] | heartbeat LOG"
      + " | workload none|delete-log|fork|fork-traced EXIT_STATUS | feed [SCREENS] [CELLS]"
      + " | limited HEADROOM_MIB [holders] | holder-memory")
  exit(64)
}

switch arguments.first {
case "stress":
  guard arguments.count >= 2 else { usage() }
  var run = StressRun(logPath: arguments[1])
  if arguments.count > 2, let objects = Int(arguments[2]), objects > 0 { run.objects = objects }
  if arguments.count > 3, let threads = Int(arguments[3]), threads > 0 { run.threads = threads }
  exit(run.run())
case "heartbeat":
  guard arguments.count == 2 else { usage() }
  HeartbeatRun(logPath: arguments[1]).run()
case "workload":
  guard arguments.count == 3, let fault = WorkloadRun.Fault(rawValue: arguments[1]),
    let status = Int32(arguments[2])
  else { usage() }
  WorkloadRun(fault: fault, exitStatus: status).run()
case "hardening":
  HardeningRun.run(Array(arguments.dropFirst()))
case "limited":
  guard arguments.count >= 2, arguments.count <= 3, let mebibytes = UInt64(arguments[1]),
    arguments.count == 2 || arguments[2] == "holders"
  else { usage() }
  exit(LimitedRun.limitAndRun(headroom: mebibytes << 20, holders: arguments.count == 3))
case "limited-run":
  exit(LimitedRun.run())
case "holder-memory":
  exit(HolderMemoryRun.run())
case "feed":
  var workload = FeedWorkload()
  if arguments.count > 1, let screens = Int(arguments[1]), screens > 0 {
    workload.screens = screens
  }
  if arguments.count > 2, let cells = Int(arguments[2]), cells > 0 { workload.cells = cells }
  exit(workload.run())
default:
  usage()
}
