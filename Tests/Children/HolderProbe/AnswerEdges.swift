import CHolders

/// The scan's answer as data (`cholders_scan`) at its edges, one `EDGES …` line each:
/// targets that are no live objects, the cap on paths, and a global's module path as the
/// raw bytes the process has (no valid UTF-8 when run by `invalid-utf8-answer`).
func answerEdges() {
  var freed: Child? = Child()
  let freedAddress = address(of: freed!)
  freed = nil
  withAnswer([0x10, freedAddress], paths: 8) { answer in
    let found = answer.map { String($0.found) }.joined(separator: ",")
    print("EDGES none count=\(answer.count) found=\(found)")
  }
  let shared = sharedChild() ^ scramble
  for cap: Int32 in [-1, 0, 1, 2] {
    withAnswer([shared], paths: cap) { answer in
      guard let value = answer.first else { return }
      print(
        "EDGES capped max=\(cap) paths=\(value.path_count) direct=\(value.direct) more=\(value.more)"
      )
    }
  }
  withAnswer([chain() ^ scramble], paths: 8) { answer in
    guard let path = answer.first?.paths?.pointee, Int(path.root.kind) == CHOLDERS_ROOT_GLOBAL
    else {
      print("EDGES no global root")
      return
    }
    let module = UnsafeRawBufferPointer(
      start: path.root.module.bytes, count: path.root.module.length)
    let symbol = UnsafeRawBufferPointer(
      start: path.root.symbol.bytes, count: path.root.symbol.length)
    print("EDGES module \(module.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined())")
    print("EDGES symbol \(String(decoding: symbol, as: UTF8.self)) steps=\(path.step_count)")
  }
}

/// Runs `body` on the answer for `targets`, or prints that the scan failed.
private func withAnswer(
  _ targets: [UInt], paths: Int32,
  _ body: (UnsafeBufferPointer<cholders_holders>) -> Void
) {
  targets.withUnsafeBufferPointer { buffer in
    guard let answer = cholders_scan(buffer.baseAddress, buffer.count, 6, paths, 0) else {
      print("EDGES scan failed")
      return
    }
    defer { cholders_scan_free(answer) }
    body(UnsafeBufferPointer(start: answer.pointee.targets, count: answer.pointee.count))
  }
}
