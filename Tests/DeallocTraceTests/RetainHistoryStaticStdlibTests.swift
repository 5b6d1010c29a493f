import Foundation
import TestSupport
import XCTest

/// CHolders defines the runtime's unowned entries itself, weak, for the retain/release
/// history (Sources/CHolders/unowned.c). A program linked with `-static-stdlib` has the
/// runtime's strong definitions of the same names: it must still link, take the runtime's,
/// and run, with holders on or off (the hooks then refuse, as before). Linked by hand from
/// this build's CHolders, CUnwind and CElf objects, as SwiftPM would link them.
final class RetainHistoryStaticStdlibTests: XCTestCase {
  private static let program = """
    final class Target { var value = 1 }
    final class Holder {
      unowned let target: Target
      init(_ target: Target) { self.target = target }
    }
    @inline(never) func load(_ holder: Holder) -> Int { let strong = holder.target; return strong.value }
    var holders: [Holder] = []
    let target = Target()
    for _ in 0..<3 { holders.append(Holder(target)) }
    var total = 0
    for holder in holders { total += load(holder) }
    holders.removeAll()
    print("loaded", total)
    """

  func testAProgramLinkedWithTheStaticStdlibLinksAndRuns() throws {
    let products = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
      .deletingLastPathComponent()
    let objects = try ["CHolders", "CUnwind", "CElf"].flatMap { target in
      let folder = products.appendingPathComponent("\(target).build")
      return try FileManager.default.contentsOfDirectory(atPath: folder.path)
        .filter { $0.hasSuffix(".o") }.sorted().map { folder.appendingPathComponent($0).path }
    }
    XCTAssertTrue(objects.contains { $0.hasSuffix("/unowned.c.o") }, "\(objects)")
    let scratch = try ScratchDirectory("static-stdlib")
    defer { scratch.remove() }
    let source = scratch.file("main.swift")
    try Self.program.write(toFile: source, atomically: true, encoding: .utf8)
    let executable = scratch.file("static-program")
    let link = try ChildProcess(
      URL(fileURLWithPath: "/usr/bin/env"),
      ["swiftc", "-static-stdlib", source] + objects + ["-ldl", "-o", executable],
      standardError: .mergedIntoOutput
    ).run(timeout: .seconds(600))
    XCTAssertFalse(link.timedOut)
    XCTAssertEqual(link.status, 0, link.standardOutput)
    for holders in ["0", "1"] {
      let run = try ChildProcess(
        URL(fileURLWithPath: executable), [],
        environment: ChildEnvironment.inherited(adding: ["DEALLOCTRACE_HOLDERS": holders])
      ).run()
      XCTAssertEqual(run.status, 0, "DEALLOCTRACE_HOLDERS=\(holders): \(run.standardError)")
      XCTAssertEqual(run.standardOutput, "loaded 3\n", "DEALLOCTRACE_HOLDERS=\(holders)")
    }
  }
}
