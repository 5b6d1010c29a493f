import DeallocTrace
import Foundation

/// `holders-from-code enable|start PATH`: holders turned on from code, with no
/// `DEALLOCTRACE_HOLDERS` in the environment: `DeallocTrace.enableHolders()` then
/// `start(path:)`, or `start(path:holders: true)`. Then the `chain` holder scenario, whose
/// objects are all allocated after that call, and `finish()`.
func runHoldersFromCode(how: String, path: String) {
  do {
    if how == "enable" {
      print("enabled \(DeallocTrace.enableHolders())")
      try DeallocTrace.start(path: path)
    } else {
      try DeallocTrace.start(path: path, holders: true)
    }
  } catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    return
  }
  runHolderScenario("chain")
  DeallocTrace.finish()
}
