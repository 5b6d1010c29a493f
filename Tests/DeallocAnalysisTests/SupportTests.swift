import DeallocLog
import Testing
import TextEscaping

@testable import DeallocAnalysis

@Suite struct SupportTests {
  @Test(arguments: [
    ("1s", Int64(1_000_000_000)), ("250ms", 250_000_000), ("2.5s", 2_500_000_000),
    ("500us", 500_000), ("10ns", 10), ("1m", 60_000_000_000),
  ])
  func durationsParse(_ text: String, _ expected: Int64) throws {
    #expect(try DurationParsing.nanoseconds(text) == expected)
  }

  @Test(arguments: ["1", "", "s", "-1s", "1 s", "1x", "abc", "1e3s", "ms"])
  func badDurationsAreRefused(_ text: String) {
    #expect(throws: AnalysisError.invalidDuration(text)) { try DurationParsing.nanoseconds(text) }
  }

  @Test func timesFormatForPeople() {
    #expect(TimeFormatting.format(0) == "0 µs")
    #expect(TimeFormatting.format(850_400) == "850 µs")
    #expect(TimeFormatting.format(12_340_000) == "12.3 ms")
    #expect(TimeFormatting.format(9_999_940_000) == "9999.9 ms")
    #expect(TimeFormatting.format(12_345_000_000) == "12.35 s")
    #expect(TimeFormatting.format(-4_100_000) == "-4.1 ms")
  }

  /// The byte writer says what the interpolated text said, at every rounding and unit
  /// boundary and at both ends of the range.
  @Test func timesFormatAsTheInterpolatedTextDid() {
    func interpolated(_ nanoseconds: Int64) -> String {
      let value = nanoseconds.magnitude
      let text: String
      if value < 1_000_000 {
        text = "\((value + 500) / 1000) µs"
      } else if value < 10_000_000_000 {
        let tenths = (value + 50_000) / 100_000
        text = "\(tenths / 10).\(tenths % 10) ms"
      } else {
        let hundredths = (value + 5_000_000) / 10_000_000
        let fraction = hundredths % 100
        text = "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction) s"
      }
      return nanoseconds < 0 ? "-" + text : text
    }
    let boundaries: [Int64] = [
      0, 1, 499, 500, 999, 1_000, 999_499, 999_500, 999_999, 1_000_000, 1_049_999, 1_050_000,
      9_999_949_999, 9_999_950_000, 9_999_999_999, 10_000_000_000, 10_004_999_999,
      10_005_000_000, 10_090_000_000, 123_456_789_012_345, .max, .min, .min + 1,
    ]
    for value in boundaries + boundaries.filter({ $0 != .min }).map({ -$0 }) {
      #expect(TimeFormatting.format(value) == interpolated(value), "\(value)")
    }
  }

  @Test func percentilesAreExactWhenFewAndCloseWhenMany() {
    var small = LatencyDistribution()
    for value in [5, 1, 4, 2, 3] as [Int64] { small.add(value) }
    #expect(small.stats == LatencyStats(count: 5, min: 1, p50: 3, p90: 5, p99: 5, max: 5, mean: 3))
    var large = LatencyDistribution(exactLimit: 10)
    for value in 1...100_000 { large.add(Int64(value) * 1000) }
    #expect(!large.isExact)
    let p50 = Double(large.percentile(0.5)!)
    let p99 = Double(large.percentile(0.99)!)
    #expect(abs(p50 - 50_000_000) / 50_000_000 < 0.04)
    #expect(abs(p99 - 99_000_000) / 99_000_000 < 0.04)
    #expect(large.histogram.map(\.count).reduce(0, +) == 100_000)
  }

  /// The buckets are filled from the exact samples when those are dropped, and made from them
  /// for the histogram while they are kept: whichever way, the histogram counts every sample
  /// in the bucket that adding it alone would have counted it in.
  @Test func histogramIsTheSameWhetherTheSamplesStayExactOrNot() {
    var generator = SplitMix(seed: 11)
    let samples = (0..<500).map { _ in Int64(generator.next() % 50_000_000) - 5 }
    var exact = LatencyDistribution()
    for sample in samples { exact.add(sample) }
    #expect(exact.isExact)
    var expected: [Int: Int] = [:]
    for sample in samples {
      expected[LatencyDistribution.bucketIndex(max(0, sample)), default: 0] += 1
    }
    let expectedCounts = expected.keys.sorted().map { expected[$0]! }
    for limit in [0, 1, 10, 499, 500] {
      var distribution = LatencyDistribution(exactLimit: limit)
      for sample in samples { distribution.add(sample) }
      #expect(distribution.isExact == (limit == 500), "limit \(limit)")
      #expect(distribution.histogram.map(\.count) == expectedCounts, "limit \(limit)")
      #expect(distribution.histogram.map(\.lower) == exact.histogram.map(\.lower))
    }
  }

  /// Exact percentiles come from the samples of the ranks' buckets only; they must equal the
  /// nearest rank of all samples sorted, whatever the spread, ties and bucket boundaries.
  @Test func exactPercentilesEqualTheSortedSamplesNearestRank() {
    var generator = SplitMix(seed: 5)
    for trial in 0..<300 {
      var distribution = LatencyDistribution()
      var samples: [Int64] = []
      let size = 1 + Int(generator.next() % 400)
      for _ in 0..<size {
        // Small values (one bucket each), ties, wide spreads and the extremes.
        let value: Int64
        switch generator.next() % 6 {
        case 0: value = Int64(generator.next() % 40)
        case 1: value = 1_000
        case 2: value = Int64(generator.next() % (1 << UInt64(trial % 62 + 1)))
        case 3: value = .max - Int64(generator.next() % 3)
        case 4: value = -Int64(generator.next() % 5)
        default: value = Int64(generator.next() % 10_000_000)
        }
        distribution.add(value)
        samples.append(max(0, value))
      }
      samples.sort()
      for fraction in [0.0, 0.01, 0.5, 0.9, 0.99, 1.0] {
        let rank = min(size, max(1, Int((fraction * Double(size)).rounded(.up))))
        #expect(distribution.percentile(fraction) == samples[rank - 1], "trial \(trial)")
      }
      let stats = distribution.stats
      #expect(stats?.p50 == distribution.percentile(0.5))
      #expect(stats?.p90 == distribution.percentile(0.9))
      #expect(stats?.p99 == distribution.percentile(0.99))
    }
  }

  @Test func timelinesStayBoundedAndKeepThePeak() {
    var timeline = QueueTimeline(queue: "q", session: 0)
    for step in 0..<100_000 {
      timeline.record(depth: step == 77_777 ? 5000 : step % 100, at: Int64(step) * 1000)
    }
    #expect(timeline.points.count <= QueueTimeline.capacity)
    #expect(timeline.peakDepth == 5000)
    #expect(timeline.peakTime == 77_777_000)
    #expect(timeline.points.contains { $0.depth == 5000 })
    #expect(zip(timeline.points, timeline.points.dropFirst()).allSatisfy { $0.t < $1.t })
  }

  @Test(arguments: [
    ("DeallocQueue.DeallocQueue.enqueue(AnyObject) -> ()", true),
    ("closure #1 () -> () in DeallocTrace.Tracer.record() -> ()", true),
    ("generic specialization <Feed.Node> of DeallocQueue.DeallocQueue.enqueue<A>(A) -> ()", true),
    ("(extension in DeallocQueue):Swift.AnyObject.releaseInBackground() -> ()", true),
    ("swift_release", true),
    ("cunwind_backtrace", true),
    ("ctrace_record_enqueue", true),
    ("partial apply for closure #2 () -> () in (extension in DeallocTrace):Foo.bar() -> ()", true),
    ("Feed.FeedScreen.close(DeallocQueue.DeallocQueue) -> ()", false),
    ("Feed.MyDeallocQueueUser.close() -> ()", false),
    ("main", false),
    // The byte-level edges: a wrapper whose separator never comes, the first separator of
    // several, names shorter than every prefix, an empty name.
    ("closure #1 () -> () in", false),
    ("specialized DeallocQueue.DeallocQueue.enqueue() -> ()", false),
    ("specialized f of DeallocQueue.DeallocQueue.enqueue() -> ()", true),
    ("closure #1 () -> () in DeallocTrace.Tracer.a() -> () in Feed.b() -> ()", true),
    ("closure #1 () -> () in Feed.b() -> () in DeallocTrace.Tracer.a() -> ()", false),
    ("swift", false),
    ("_U", true),
    ("", false),
  ])
  func machineryFramesAreRecognised(_ symbol: String, _ machinery: Bool) {
    #expect(Signature.isMachinery(Frame(ip: 1, symbol: symbol)) == machinery)
  }

  @Test func machineryModulesNeedAProgramSymbolToCount() {
    let core = "/usr/lib/swift/linux/libswiftCore.so"
    #expect(Frame(ip: 1, module: core).isMachinery)
    #expect(Frame(ip: 1, module: core, symbol: "swift_retain").isMachinery)
    #expect(!Frame(ip: 1, module: core, symbol: "Swift.Array.append(A) -> ()").isMachinery)
    #expect(!Frame(ip: 1, module: "/app/libswiftCoreless/Feed").isMachinery)
    #expect(Frame(ip: 1, module: "libdispatch.so").isMachinery)
    #expect(!Frame(ip: 1, module: "/usr/lib/libdispatch.so/").isMachinery)
    #expect(!Frame(ip: 1, module: "").isMachinery)
  }

  @Test(arguments: [
    ("Feed.Screen.step(animated: Swift.Bool) -> ()", "Screen.step(animated: Swift.Bool)"),
    ("closure #1 () -> () in Feed.f() -> ()", "closure #1 () -> () in Feed.f()"),
    ("Feed.makeList() -> [Feed.Item]", "Feed.makeList()"),
    ("a.b.c", "b.c"),
    ("Ünï.Cödé.f() -> ()", "Cödé.f()"),
    ("Feed.T.x -> y", "T.x -> y"),
  ])
  func shortNamesDropTheModuleAndTheReturnType(_ symbol: String, _ short: String) {
    #expect(Frame(ip: 1, symbol: symbol).shortName == short)
  }

  @Test func framesHaveShortNames() {
    #expect(Frame(ip: 1, symbol: "Feed.FeedScreen.close() -> ()").shortName == "FeedScreen.close()")
    #expect(Frame(ip: 1, symbol: "main").shortName == "main")
    #expect(Frame(ip: 0x10, module: "/app/Feed", offset: 0x1f).displayName == "Feed+0x1f")
    #expect(Frame(ip: 0x10).displayName == "0x10")
  }

  @Test func jsonStringsAreEscaped() {
    #expect(Escaping.json("a\"b\\c\n\u{1}é") == #""a\"b\\c\n\u0001é""#)
  }
}
