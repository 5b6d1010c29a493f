/// What the probe does, chosen by its first argument.
enum ProbeMode: String {
  /// Every record kind once: enqueues from a nested stack and from a named thread, a
  /// deinit that enqueues and marks, a survivor let go later, a check, timer and explicit
  /// drains. Exits normally, so `end` comes from the exit handler.
  case scenario
  /// The scenario between `DeallocTrace.start(path:)` and `finish()`.
  case explicit
  /// Enqueues and drains until killed; prints `ready` once the log has records.
  case forever
  /// Forks; the child uses the queue and exits, the parent then runs the scenario.
  case fork
  /// A survivor let go with no drain, mark or check afterwards: only the tracer's timer can
  /// notice its death.
  case timerSurvivor = "timer-survivor"
  /// Deletes its own log while recording, then keeps using the queue.
  case deleteLog = "delete-log"
  /// `--explicit`-style session (`lost-at-finish PATH`): three objects wait in a 60 s queue
  /// while another thread drains an object whose `deinit` outlasts `finish()`, so the
  /// release of it is refused: `end` must say `pending: 3, lost: 1`.
  case lostAtFinish = "lost-at-finish"
  /// `id-straddle FIRST SECOND`: an enqueue whose id is taken after its session finished
  /// and the next one started (`runIDStraddle`).
  case idStraddle = "id-straddle"
  /// Exits with five objects still in a 60 s queue (tracing from the environment).
  case pendingAtExit = "pending-at-exit"
  /// `survivor-race PATH`: rounds of 2000 survivors that die just before `finish()`, while
  /// another thread marks (and so looks at the survivors) without pause.
  case survivorRace = "survivor-race"
  /// Records until the tracer stops on a write error (the test limits the file's size),
  /// then keeps using the queue; prints `stopped after N rounds`.
  case fillLog = "fill-log"
  /// Prints the log descriptor's `/proc/self/fdinfo` flags, then runs `/bin/ls -l
  /// /proc/self/fd` as a child: the log must not be among the child's descriptors.
  case descriptor
  /// Calls glibc's `backtrace()` and libgcc's `_Unwind_Backtrace` in a traced process and
  /// prints which library provides each and how many frames each found.
  case unwinders
  /// `holders NAME`: one holder scenario (`HolderScenario`), run with
  /// `DEALLOCTRACE_HOLDERS=1`.
  case holders
  /// `holders-from-code enable|start PATH`: holders turned on from code
  /// (`runHoldersFromCode`).
  case holdersFromCode = "holders-from-code"
  /// Values handed to the queue (an array, a dictionary, a struct of arrays) beside an
  /// object, then an explicit drain (`runValueScenario`).
  case values
  /// Objects of types declared inside functions, handed to the queue and drained
  /// (`runLocalTypes`): their names must not carry the runtime's addresses.
  case localTypes = "local-types"
  /// A program that exercises what the runtime hooks must survive (long string literals
  /// copied into arrays, dictionaries, closures, weak and unowned references, async tasks,
  /// libdispatch); prints `survived` at the end.
  case holdersSurvival = "holders-survival"
  /// Both ends of a cycle tracked by one `LeakTracker`, with holders (`runBothEnds`).
  case bothEnds = "both-ends"
  /// A type under retain/release history beside one not under it (`runHistoryScenario`).
  case history
}
