import CTraceRuntime

extension DeallocTrace {
  /// Whether holder scanning is on in this process: the live-object registry and the
  /// runtime hooks are installed (by `DEALLOCTRACE_HOLDERS=1` as the process loaded, by
  /// `enableHolders()`, or by `start(path:frames:holders:)`).
  public static var holdersEnabled: Bool {
    Holders.isOn
  }

  /// Turns holder scanning on from code: installs the runtime hooks and starts the
  /// registry of live Swift objects. Sessions started afterwards record `holders`, and
  /// `DeallocTesting` names who holds a leaked object in its failure message.
  ///
  /// Why an explicit call: the hooks cost every retain and release of the process a few
  /// nanoseconds and every allocation a registry entry, so they are off unless asked for.
  /// The trade-off of turning them on here rather than with `DEALLOCTRACE_HOLDERS=1`: only
  /// objects allocated after this call are known, so an older object never gets a path.
  ///
  /// - Returns: whether holders are on. When this runtime cannot be hooked safely, one
  ///   line on stderr says why (once per process) and the answer is false.
  @discardableResult
  public static func enableHolders() -> Bool {
    Holders.enable()
  }

  /// Who holds `object` now, as the scanner's HOLDERS-VALUE JSON (`docs/log-format.md`,
  /// the `holders` record's members): for a leak assertion's failure message, with no log.
  ///
  /// Nil when holders are off or refused, or when `object` was allocated before they
  /// started. The caller's own references are on its stack, which the scan does not read.
  /// `others` is how many strong references the caller counted besides its own (a leak
  /// assertion's "N other strong references"): the rest of the count, here, is the caller's
  /// and its temporaries' (an unoptimized build copies a reference at each call), so that
  /// the object's strong count can tell stale words from owners (too high a count only
  /// keeps more words). The scan takes tens of milliseconds on a large heap, so it is for
  /// failures, not for every assertion; it is not counted against a session's scan caps.
  package static func holdersJSON(of object: AnyObject, others: Int) -> String? {
    guard Holders.isOn else { return nil }
    let address = UInt(bitPattern: ObjectIdentifier(object))
    let count = ctrace_retain_count(Unmanaged.passUnretained(object).toOpaque())
    let references = Int32(clamping: max(0, count - others))
    var values: [HoldersValue?]?
    if let session = Tracer.session() {
      // Under the survivor list's lock, so that no look holds references meanwhile.
      Tracer.withSurvivorsQuiet(session) { _ in
        values = Holders.scan(count: 1, callerReferences: references) { $0[0] = address }
      }
    } else {
      values = Holders.scan(count: 1, callerReferences: references) { $0[0] = address }
    }
    ctrace_scrub_dead_stack()
    return (values?.first ?? nil)?.json
  }
}
