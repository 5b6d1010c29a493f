import DeallocAnalysis
import Foundation
import TestSupport
import XCTest

/// The report's layout in headless Chromium at 1280×800: the findings come before the charts
/// and start on the first screen,
/// and every table either fits the window or scrolls inside a box of its own that does (a
/// table wider than the page was cut off at its right edge). A screenshot of each page is
/// kept in out/test-artifacts/html-layout/ (its path is printed) for a person to look at.
final class HTMLLayoutTests: XCTestCase {
  /// Appended to the page: writes what it measured into `data-layout` on the root element.
  private static let measuring = """
    <script>
    (function(){
      var width=document.documentElement.clientWidth, problems=[];
      document.querySelectorAll('table').forEach(function(table){
        var box=table;
        while(box&&box!==document.body){
          var o=getComputedStyle(box).overflowX;
          if(o==='auto'||o==='scroll')break;
          box=box.parentElement;
        }
        var scrolls=box&&box!==document.body;
        var limit=scrolls?box.getBoundingClientRect().right:width;
        if(scrolls&&limit>width+1)problems.push(table.className+': its box ends at '+limit);
        if(!scrolls){
          table.querySelectorAll('th,td').forEach(function(cell){
            var right=cell.getBoundingClientRect().right;
            var clip=Math.min(width,table.getBoundingClientRect().right);
            if(right>clip+1)problems.push(table.className+': a cell ends at '+right);
          });
        }
      });
      var findings=document.getElementById('findings'), chart=document.querySelector('svg.chart');
      if(findings&&chart&&(findings.compareDocumentPosition(chart)&Node.DOCUMENT_POSITION_PRECEDING))
        problems.push('a chart comes before the findings');
      if(findings&&findings.getBoundingClientRect().top>window.innerHeight)
        problems.push('the findings start below the first screen');
      document.documentElement.setAttribute('data-layout',problems.length?problems.join(' | '):'ok');
    })();
    </script>
    """

  func testFindingsComeFirstAndEveryTableFitsAt1280() throws {
    let browser = try HeadlessChromium.require()
    let directory = try scratchDirectory("visual").url
    let artifacts = Fixtures.root.deletingLastPathComponent()
      .appendingPathComponent("out/test-artifacts/html-layout")
    try FileManager.default.createDirectory(at: artifacts, withIntermediateDirectories: true)
    for fixture in ["demo", "hostile"] {
      let page = directory.appendingPathComponent("\(fixture).html")
      var html = HTMLRenderer().render(try Fixtures.report("html/\(fixture).jsonl"))
      html = html.replacingOccurrences(of: "</body>", with: Self.measuring + "</body>")
      try Data(html.utf8).write(to: page)
      let png = artifacts.appendingPathComponent("\(fixture)-1280x800.png")
      try browser.screenshot(of: page, to: png, size: (1280, 800))
      print("HTMLLayoutTests: screenshot at \(png.path)")
      let (dom, _) = try browser.dumpDOM(of: page, size: (1280, 800))
      guard let start = dom.range(of: "data-layout=\"") else {
        return XCTFail("\(fixture): the measuring script did not run")
      }
      let rest = dom[start.upperBound...]
      let verdict = rest[..<(rest.firstIndex(of: "\"") ?? rest.endIndex)]
      XCTAssertEqual(String(verdict), "ok", fixture)
    }
  }
}
