// swift-tools-version: 6.0
import PackageDescription

/// dealloctrace: a background deallocation queue for Swift on Linux, a recorder that
/// traces what it does, and a CLI that explains the resulting "leaks".
let package = Package(
  name: "dealloctrace",
  products: [
    .library(name: "DeallocQueue", targets: ["DeallocQueue"]),
    .library(name: "DeallocTrace", targets: ["DeallocTrace"]),
    .library(name: "DeallocTesting", targets: ["DeallocTesting"]),
    // The way to read logs in one's own tool (docs/log-format.md).
    .library(name: "DeallocLog", targets: ["DeallocLog"]),
    // The preloadable recorder of `dealloctrace run`: C only (see Sources/DeallocPreload).
    .library(name: "DeallocTracePreload", type: .dynamic, targets: ["DeallocPreload"]),
    .executable(name: "dealloctrace", targets: ["dealloctrace-cli"]),
    // `swift package dealloctrace`: the tests traced, reported and gated in one command.
    .plugin(name: "DeallocTracePlugin", targets: ["DeallocTracePlugin"]),
  ],
  targets: [
    // Recording half.
    // libunwind is loaded with dlopen(RTLD_LOCAL), not linked: linked, it replaces glibc's
    // `backtrace` and libgcc's `_Unwind_*` in every host process (see CUnwind.c).
    .target(name: "CUnwind", dependencies: ["CElf"]),
    // The ELF symbol-table reader and sorted symbol index CUnwind and CHolders share.
    .target(name: "CElf"),
    // The recorder's C state: session pointers, per-thread state, ids, the fork handler and
    // the log file's system calls.
    .target(name: "CTraceRuntime", dependencies: ["CQueueRuntime"]),
    // The queue side's C, one small target: the seam between the queue and the recorder (the
    // tracing switch and the recorder's start, CDeallocHooks.h), the drain timer's system
    // calls (CDrainTimer.h) and the lock edges restated for ThreadSanitizer (CSanitizer.h,
    // see AnnotatedMutex). The queue needs only this, never the recorder.
    .target(name: "CQueueRuntime"),
    // How text from a log or a program is escaped for each output (JSON, terminal,
    // Markdown, HTML, XML, GitHub workflow commands): shared by the recorder's writer and
    // every reader-side output, so the same name is written the same way everywhere. Also
    // the one compact JSON writer (CompactJSON), of the recorder and the Perfetto export.
    .target(name: "TextEscaping"),
    .target(name: "DeallocHooks", dependencies: ["CQueueRuntime", "DeallocWire"]),
    // Who holds a leaked object: runtime hooks, a live-object registry and a reference
    // scan (issue 10). Needs libdl for dlsym/dladdr (part of glibc on current distros).
    // Allocation stacks (DEALLOCTRACE_ALLOC_STACKS) unwind with CUnwind.
    .target(
      name: "CHolders", dependencies: ["CElf", "CUnwind"], linkerSettings: [.linkedLibrary("dl")]),
    // The preloadable recorder (`dealloctrace run`): CHolders and a constructor, no Swift
    // module, so that it clashes with nothing a host links.
    .target(name: "DeallocPreload", dependencies: ["CHolders", "CElf"]),
    .target(
      name: "DeallocTrace",
      dependencies: [
        "DeallocHooks", "CUnwind", "CTraceRuntime", "CHolders", "TextEscaping", "DeallocWire",
      ]
    ),
    // The hot record kinds' keys and field order, which the writer and both parsers share.
    .target(name: "DeallocWire"),
    .target(name: "DeallocQueue", dependencies: ["DeallocHooks", "CQueueRuntime"]),
    .target(
      name: "DeallocTesting",
      // DeallocAnalysis only for a failing Swift Testing test's HTML attachment: linked into
      // test targets, where its size costs nothing at run time and it runs only on failure.
      dependencies: [
        "DeallocHooks", "DeallocQueue", "DeallocTrace", "DeallocLog", "DeallocAnalysis",
      ]
    ),

    // Analysis half.
    // The log's records and their reader: what DeallocTesting reads its own log back with
    // (an enqueue stack) on every failing check.
    .target(name: "DeallocLog", dependencies: ["TextEscaping", "DeallocWire"]),
    .target(
      name: "DeallocAnalysis", dependencies: ["DeallocLog", "TextEscaping", "DeallocWire", "CElf"]),
    .executableTarget(
      name: "dealloctrace-cli",
      dependencies: ["DeallocAnalysis", "DeallocLog", "TextEscaping"]
    ),

    .plugin(
      name: "DeallocTracePlugin",
      capability: .command(
        intent: .custom(
          verb: "dealloctrace",
          description: "Run the tests traced, print the leak report and gate with check")),
      dependencies: ["dealloctrace-cli"]
    ),

    // The benchmark (docs/benchmarks.md).
    .executableTarget(
      name: "dealloctrace-bench",
      dependencies: [
        "DeallocQueue", "DeallocTrace", "DeallocLog", "DeallocAnalysis", "TextEscaping",
        "CUnwind", "CTraceRuntime", "CHolders",
      ],
      path: "Benchmarks/dealloctrace-bench"
    ),
    // The program the README's quick start traces (`make demo`).
    .executableTarget(
      name: "FeedDemo",
      dependencies: ["DeallocQueue", "DeallocTrace"],
      path: "Examples/FeedDemo"
    ),

    // The tests' child processes (Tests/Children).
    // A small traced program that the tracing tests run as a child process.
    .executableTarget(
      name: "TraceProbe",
      dependencies: [
        "DeallocQueue", "DeallocTrace", "CTraceRuntime", "DeallocTesting", "CHolders",
      ],
      path: "Tests/Children/TraceProbe"
    ),
    // The child that the CHolders tests run: one holder scenario per argument.
    .executableTarget(
      name: "HolderProbe",
      dependencies: ["CHolders"],
      path: "Tests/Children/HolderProbe"
    ),
    // The child of the census tests: one leak (or non-leak) scenario per argument.
    .executableTarget(
      name: "CensusProbe",
      dependencies: [
        "DeallocQueue", "DeallocHooks", "DeallocTrace", "CHolders", "CensusProbeSupport",
      ],
      path: "Tests/Children/CensusProbe"
    ),
    // The census child's C: a thread whose only reference is in a register while it blocks.
    .target(name: "CensusProbeSupport", path: "Tests/Children/CensusProbeSupport"),
    // Leaks chosen on the command line: the child of the baseline's end-to-end tests.
    .executableTarget(
      name: "BaselineDemo",
      dependencies: ["DeallocQueue", "DeallocTrace"],
      path: "Tests/Children/BaselineDemo"
    ),
    // A plain Swift program that imports nothing of this package: the child of the
    // `dealloctrace run` tests.
    .executableTarget(name: "PlainCycle", path: "Tests/Children/PlainCycle"),
    // A program with DeallocQueue and without the recorder, for the same tests.
    .executableTarget(
      name: "QueueOnlyProbe", dependencies: ["DeallocQueue"], path: "Tests/Children/QueueOnlyProbe"),
    // The stress, crash and fault child that the reliability tests run.
    .executableTarget(
      name: "StressChild",
      dependencies: ["DeallocQueue", "DeallocTrace"],
      path: "Tests/Children/StressChild"
    ),

    // Tests.
    .testTarget(name: "DeallocQueueTests", dependencies: ["DeallocQueue", "TestSupport"]),
    // The tests that need real time to pass (real timers, a sleeping deinit, a settle wait),
    // the queue's and the leak assertions': one target, so that they run as one serial group
    // apart from the rest. They assert order, never durations.
    .testTarget(
      name: "TimingTests", dependencies: ["DeallocQueue", "DeallocTesting", "TestSupport"]
    ),
    .testTarget(
      name: "DeallocTraceTests",
      dependencies: [
        "DeallocTrace", "DeallocHooks", "DeallocQueue", "TraceProbe", "TestSupport", "DeallocLog",
        "DeallocWire", "DeallocAnalysis", "CHolders",
      ]
    ),
    // Golden-file comparison shared by the test targets.
    .target(name: "GoldenFiles", dependencies: ["TestSupport"], path: "Tests/GoldenFiles"),
    // What the tests share: the one child-process runner (the environment it clears, reading a
    // child's pipes while it runs), the one raw log parser, scratch directories, and the
    // objects the queue's, the leak assertions' and the timing tests let go of.
    .target(name: "TestSupport", dependencies: ["DeallocLog"], path: "Tests/TestSupport"),
    // What must hold of every gate result, whatever the input: checked by the gate's tests and
    // by the fuzzer (scripts/fuzz), and kept out of the library that ships.
    .target(
      name: "GateInvariants", dependencies: ["DeallocAnalysis", "DeallocLog"],
      path: "Tests/GateInvariants"),
    .testTarget(
      name: "DeallocAnalysisTests",
      dependencies: [
        "DeallocAnalysis", "DeallocLog", "TextEscaping", "GoldenFiles", "TestSupport",
        "DeallocWire", "CElf",
      ]
    ),
    .testTarget(
      name: "DeallocTestingTests",
      dependencies: ["DeallocTesting", "DeallocHooks", "DeallocLog", "TestSupport"]
    ),
    // The HTML report (content, charts, in a headless browser) and the Perfetto export.
    .testTarget(
      name: "HTMLAndPerfettoTests",
      dependencies: ["DeallocAnalysis", "DeallocLog", "TextEscaping", "TestSupport"]
    ),
    .testTarget(
      name: "DeallocGateTests",
      dependencies: [
        "DeallocAnalysis", "DeallocLog", "TextEscaping", "GoldenFiles", "TestSupport",
        "DeallocWire", "GateInvariants",
      ]
    ),
    // Runs the built executables (the CLI, the demo) as child processes.
    .testTarget(
      name: "EndToEndTests",
      dependencies: [
        "DeallocAnalysis", "DeallocLog", "TextEscaping", "dealloctrace-cli", "FeedDemo",
        "TraceProbe",
        "BaselineDemo",
        "TestSupport",
      ]
    ),
    // Holder scans of HolderProbe scenarios, as child processes (debug and release).
    .testTarget(name: "CHoldersTests", dependencies: ["HolderProbe", "TestSupport"]),
    // The whole-process leak census of CensusProbe scenarios, as child processes.
    .testTarget(
      name: "CensusTests", dependencies: ["CensusProbe", "DeallocTesting", "TestSupport"]),
    // `dealloctrace run` on programs that import nothing of this package, as child processes;
    // Fixtures/ holds a package of its own (`run -- swift test`).
    .testTarget(
      name: "RunCommandTests",
      dependencies: [
        "dealloctrace-cli", "PlainCycle", "BaselineDemo", "QueueOnlyProbe", "TestSupport",
      ],
      exclude: ["Fixtures"]
    ),
    // Stress, crash, fault and fuzz-regression tests, with StressChild as the child.
    .testTarget(
      name: "ReliabilityTests",
      dependencies: ["DeallocAnalysis", "DeallocLog", "StressChild", "TestSupport"]
    ),
  ]
)
