import XCTest

@testable import DeallocAnalysis

/// The chart helpers: scales and ticks, axis labels, latency bins, depth downsampling.
final class ChartGeometryTests: XCTestCase {
  func testScaleMapsAndClampsAndFlips() {
    let x = LinearScale(domain: 0...100, range: 50...150)
    XCTAssertEqual(x.position(0), 50)
    XCTAssertEqual(x.position(25), 75)
    XCTAssertEqual(x.position(500), 150, "clamped")
    let y = LinearScale(domain: 0...10, range: 0...200, flipped: true)
    XCTAssertEqual(y.position(0), 200)
    XCTAssertEqual(y.position(10), 0)
  }

  func testTicksAreRoundSteps() {
    XCTAssertEqual(
      LinearScale(domain: 0...250e6, range: 0...1).ticks(count: 8),
      [
        0, 50e6, 100e6, 150e6, 200e6, 250e6,
      ])
    XCTAssertEqual(LinearScale(domain: 0...7, range: 0...1).ticks(count: 4), [0, 2, 4, 6])
    XCTAssertEqual(LinearScale.niceStep(0.3), 0.5)
    XCTAssertEqual(LinearScale.niceStep(1200), 2000)
  }

  func testAxisLabelsUseOneUnitPerAxis() {
    XCTAssertEqual(TimeAxisLabels.label(0, step: 2e9, maximum: 12e9), "0")
    XCTAssertEqual(TimeAxisLabels.label(4e9, step: 2e9, maximum: 12e9), "4 s")
    XCTAssertEqual(TimeAxisLabels.label(150e6, step: 50e6, maximum: 250e6), "150 ms")
    XCTAssertEqual(TimeAxisLabels.label(2.5e9, step: 0.5e9, maximum: 3e9), "2.5 s")
    XCTAssertEqual(TimeAxisLabels.label(0.2e9, step: 0.2e9, maximum: 1.2e9), "0.2 s")
    XCTAssertEqual(TimeAxisLabels.label(1500, step: 500, maximum: 2000), "1.5 µs")
    XCTAssertEqual(TimeAxisLabels.label(20, step: 10, maximum: 50), "20 ns")
  }

  func testSVGNumbersHaveOneDecimalAndNoNegativeZero() {
    XCTAssertEqual(SVGNumber.format(12), "12")
    XCTAssertEqual(SVGNumber.format(12.345), "12.3")
    XCTAssertEqual(SVGNumber.format(-0.01), "0")
    XCTAssertEqual(SVGNumber.format(-3.26), "-3.3")
    XCTAssertEqual(SVGNumber.format(.nan), "0")
  }

  func testLatencyBinsFollowOneTwoFiveAndKeepEveryCount() {
    XCTAssertEqual((0...7).map(LatencyBins.edge), [0, 1, 2, 5, 10, 20, 50, 100])
    XCTAssertEqual(LatencyBins.index(of: 0), 0)
    XCTAssertEqual(LatencyBins.index(of: 49), 5)
    XCTAssertEqual(LatencyBins.index(of: 50), 6)
    var wide = LatencyDistribution()
    for value: Int64 in [1_500, 30_000, 2_000_000, 90_000_000, 100_000_000, 3_000_000_000] {
      wide.add(value)
    }
    let bins = LatencyBins(wide).bins
    XCTAssertEqual(bins.map(\.count).reduce(0, +), 6)
    XCTAssertEqual(bins.first?.lower, 1_000)
    XCTAssertEqual(bins.last?.upper, 5_000_000_000)
    for (a, b) in zip(bins, bins.dropFirst()) { XCTAssertEqual(a.upper, b.lower, "contiguous") }
  }

  func testNarrowLatencyFallsBackToFineBucketsWithContext() {
    var narrow = LatencyDistribution()
    for offset: Int64 in 0..<50 { narrow.add(100_000_000 + offset * 10_000) }
    let bins = LatencyBins(narrow).bins
    XCTAssertGreaterThanOrEqual(bins.count, LatencyBins.minimumFineBins)
    XCTAssertEqual(bins.map(\.count).reduce(0, +), 50)
    XCTAssertEqual(bins.first?.count, 0, "empty context on the left")
    XCTAssertEqual(bins.last?.count, 0, "empty context on the right")
    XCTAssertLessThan(bins.first!.lower, 100_000_000)
  }

  func testDepthColumnsKeepThePeakAndLeaveAtTheLastDepth() {
    // A burst to 7 and a drain to 0 inside one pixel column, then nothing for a long time.
    let points = [
      DepthPoint(t: 100, depth: 7), DepthPoint(t: 200, depth: 3), DepthPoint(t: 300, depth: 0),
      DepthPoint(t: 900_000, depth: 2),
    ]
    let x = LinearScale(domain: 0...1_000_000, range: 0...100)
    let steps = DepthSteps(points, scale: x)
    XCTAssertEqual(steps.columns.count, 2)
    XCTAssertEqual(steps.columns[0], DepthSteps.Column(x: 0, peak: 7, last: 0))
    let y = LinearScale(domain: 0...7, range: 0...70, flipped: true)
    XCTAssertEqual(steps.areaPath(start: 0, end: 100, y: y), "M0,70H0V0H1V70H90V50H100V70Z")
  }
}
