import DeallocLog
import TextEscaping

/// The gate's verdict as GitHub Actions workflow commands (`::error`, `::warning`,
/// `::notice`), which the runner turns into annotations on the run and the pull request.
///
/// GitHub shows at most 10 annotations of each kind per step, so they are ordered most
/// serious first and capped, and a last `::notice` says how many were left out:
/// - errors: the failed verdict (which thresholds, by how much), then every finding that
///   counts against an exceeded threshold, in the report's order (most serious kind, then
///   largest group);
/// - warnings: findings that count but stay within their limit, then suppressions that
///   matched nothing (pointing at their line in the suppressions file).
/// - notices (with `--baseline`): findings the baseline knows, then its fixed entries
///   ("remove from the baseline"); a new or grown finding is an error or a warning as any
///   counted finding is, its message saying it is new.
/// Suppressed findings get no annotation: they are in the text verdict and step summary.
///
/// Escaping is ``Escaping/workflowData(_:)`` for messages and
/// ``Escaping/workflowProperty(_:)`` for properties (`file`, `line`, `title`).
///
/// An annotation is placed on a file only when GitHub can find it: with ``workspace`` set,
/// on the first caller frame whose file lies inside it, named relative to it; a finding
/// whose frames all lie elsewhere (the toolchain, a dependency outside the checkout) is
/// annotated on the run instead, with its frames in the message.
public struct GitHubRenderer: Sendable {
  /// GitHub's limit per kind of annotation and per step.
  public static let annotationLimit = 10

  /// The repository checkout (`$GITHUB_WORKSPACE`): absolute source paths under it are
  /// made relative, which is what GitHub needs to place an annotation on a file.
  public var workspace: String?
  /// The directory relative paths (a suppressions file named on the command line) are
  /// relative to, to name them relative to ``workspace``; `nil` leaves them as they are.
  public var currentDirectory: String?
  /// Caller frames in a finding's message.
  public var maximumFrames = 6
  /// Every frame of a stack as recorded, instead of the program's first and the rest
  /// folded into one line (``StackListing``): `--all-frames`.
  public var allFrames = false

  public init(workspace: String? = nil, currentDirectory: String? = nil) {
    self.workspace = workspace
    self.currentDirectory = currentDirectory
  }

  /// One annotation.
  public struct Annotation: Sendable, Equatable {
    /// How serious the annotation is: its workflow command (`::error`, `::warning`, `::notice`).
    ///
    /// Closed: GitHub Actions defines exactly these annotation levels.
    public enum Level: String, Sendable, Comparable {
      case error
      case warning
      case notice

      public static func < (lhs: Level, rhs: Level) -> Bool {
        let order: [Level] = [.error, .warning, .notice]
        return order.firstIndex(of: lhs)! < order.firstIndex(of: rhs)!
      }
    }

    public var level: Level
    public var file: String?
    public var line: Int?
    public var title: String
    public var message: String

    public init(level: Level, file: String?, line: Int?, title: String, message: String) {
      self.level = level
      self.file = file
      self.line = line
      self.title = title
      self.message = message
    }

    /// The workflow command, escaped, without a newline.
    public var command: String {
      var properties: [String] = []
      if let file { properties.append("file=" + Escaping.workflowProperty(file)) }
      if file != nil, let line { properties.append("line=\(line)") }
      properties.append("title=" + Escaping.workflowProperty(title))
      return "::\(level.rawValue) \(properties.joined(separator: ","))::"
        + Escaping.workflowData(message)
    }
  }

  /// The workflow commands, one per line.
  public func render(_ result: GateResult) -> String {
    annotations(result).map { $0.command + "\n" }.joined()
  }

  /// The annotations to emit, capped per level, with a closing notice when some were left
  /// out.
  public func annotations(_ result: GateResult) -> [Annotation] {
    var errors: [Annotation] = []
    var warnings: [Annotation] = []
    if !result.passed {
      errors.append(
        Annotation(
          level: .error, file: nil, line: nil, title: "dealloctrace check failed",
          message: Self.failedSentences(result).joined(separator: "\n")))
    }
    for judged in result.counted {
      let annotation = self.annotation(judged)
      if judged.failing { errors.append(annotation) } else { warnings.append(annotation) }
    }
    if let process = result.processLeaks {
      for judged in process.counted {
        let annotation = censusAnnotation(judged, failing: !process.passed)
        if process.passed { warnings.append(annotation) } else { errors.append(annotation) }
      }
    }
    warnings += result.unusedSuppressions.map(unusedAnnotation)
    return Self.capped(errors: errors, warnings: warnings, notices: baselineNotices(result))
  }

  /// At most ``annotationLimit`` of each level, then one notice that counts what was left out.
  private static func capped(
    errors: [Annotation], warnings: [Annotation], notices: [Annotation]
  ) -> [Annotation] {
    let limit = Self.annotationLimit
    var out = Array(errors.prefix(limit)) + Array(warnings.prefix(limit))
    let leftErrors = max(0, errors.count - limit)
    let leftWarnings = max(0, warnings.count - limit)
    // The closing notice is a notice too: with it, one fewer of the others fits.
    let noticeRoom = leftErrors + leftWarnings > 0 || notices.count > limit ? limit - 1 : limit
    out += notices.prefix(noticeRoom)
    let leftNotices = max(0, notices.count - noticeRoom)
    if leftErrors + leftWarnings + leftNotices > 0 {
      var parts: [String] = []
      if leftErrors > 0 { parts.append(RenderingSupport.plural(leftErrors, "error")) }
      if leftWarnings > 0 { parts.append(RenderingSupport.plural(leftWarnings, "warning")) }
      if leftNotices > 0 { parts.append(RenderingSupport.plural(leftNotices, "notice")) }
      out.append(
        Annotation(
          level: .notice, file: nil, line: nil, title: "dealloctrace: annotations left out",
          message:
            "\(parts.joined(separator: " and ")) not annotated: GitHub shows at most \(limit)"
            + " of each kind per step. The step log and the job summary list every finding."))
    }
    return out
  }

  /// A notice per finding the baseline knows and per baseline entry no longer found; none
  /// without a baseline.
  private func baselineNotices(_ result: GateResult) -> [Annotation] {
    guard let baseline = result.baseline else { return [] }
    var notices: [Annotation] = []
    for judged in result.known {
      let finding = judged.finding
      notices.append(
        Annotation(
          level: .notice, file: nil, line: nil,
          title:
            "dealloctrace: known: \(finding.kind.title): \(finding.signature.title)"
            + " (×\(finding.count)) [id:\(finding.id)]",
          message:
            "In the baseline \(paths.display(baseline.path)): not counted."
            + " \(finding.explanation)"))
    }
    for judged in result.processLeaks?.groups ?? [] where judged.isKnown {
      let group = judged.group
      notices.append(
        Annotation(
          level: .notice, file: nil, line: nil,
          title:
            "dealloctrace: known: \(FindingDigest.Kind.process(group.kind).title):"
            + " \(group.rootType) (×\(group.instances)) [id:\(group.id)]",
          message: "In the baseline \(paths.display(baseline.path)): not counted."))
    }
    for entry in result.fixedBaselineEntries {
      notices.append(
        Annotation(
          level: .notice, file: placeable(baseline.path), line: nil,
          title: "dealloctrace: fixed, remove from the baseline [id:\(entry.id)]",
          message:
            "\(entry.kind.title): \(entry.title) (baseline ×\(entry.count)) no longer occurs;"
            + " remove id \(entry.id) from \(paths.display(baseline.path)), or write it again with"
            + " --write-baseline"))
    }
    return notices
  }

  /// Each failed judgement as `--option: sentence`.
  private static func failedSentences(_ result: GateResult) -> [String] {
    var lines = result.failedThresholds.map { "--\($0.threshold.optionName): \($0.sentence)" }
    if let process = result.processLeaks, !process.passed {
      lines.append("--\(ProcessLeakResult.optionName): \(process.sentence)")
    }
    if let growing = result.growingTypes, !growing.passed {
      lines.append("--\(GrowingTypesResult.optionName): \(growing.sentence)")
    }
    if let library = result.libraryLeaks, !library.passed {
      lines.append("--\(LibraryLeakResult.optionName): \(library.sentence)")
    }
    return lines
  }

  /// A census finding of the program that counts: its tree in the message, on the run (a
  /// census has no source location).
  private func censusAnnotation(_ judged: ProcessLeakResult.JudgedGroup, failing: Bool)
    -> Annotation
  {
    let group = judged.group
    var lines = CensusTreeText.lines(group, listing: StackListing.lines(allFrames: allFrames)).map {
      String($0.drop { $0 == " " })
    }
    switch judged.baseline {
    case .new: lines.insert("New: not in the baseline.", at: 0)
    case .grown(let count): lines.insert("Grown from ×\(count) in the baseline.", at: 0)
    case .known, nil: break
    }
    return Annotation(
      level: failing ? .error : .warning, file: nil, line: nil,
      title:
        "dealloctrace: \(FindingDigest.Kind.process(group.kind).title): \(group.rootType)"
        + " (×\(group.instances)) [id:\(group.id)]",
      message: lines.joined(separator: "\n"))
  }

  /// A warning on the suppression file's line: the suppression matched nothing.
  private func unusedAnnotation(_ suppression: Suppression) -> Annotation {
    Annotation(
      level: .warning, file: placeable(suppression.file), line: suppression.line,
      title: "dealloctrace: unused suppression",
      message:
        "\(suppression.pattern) matched no finding; remove it or fix its pattern"
        + (suppression.reason.isEmpty ? "" : " (reason given: \(suppression.reason))"))
  }

  private func annotation(_ judged: GateResult.JudgedFinding) -> Annotation {
    let finding = judged.finding
    var lines = [finding.explanation]
    switch judged.baseline {
    case .new: lines.insert("New: not in the baseline.", at: 0)
    case .grown(let count): lines.insert("Grown from ×\(count) in the baseline.", at: 0)
    case .known, nil: break
    }
    if let example = finding.examples.first {
      lines.append("first: " + RenderingSupport.example(example, of: finding))
    }
    lines += RenderingSupport.holderLines(finding, allFrames: allFrames)
    let stack = StackListing(finding.stack, limit: maximumFrames, allFrames: allFrames)
    if !stack.frames.isEmpty || stack.folded > 0 {
      lines.append("enqueued at:")
      for frame in stack.frames {
        lines.append("  " + RenderingSupport.frameLine(paths.display(frame)))
      }
      for line in stack.trailingLines { lines.append("  " + line) }
    }
    let frame = finding.callerSourceFrame { placeable($0) != nil }
    let file = frame?.file.flatMap(placeable)
    return Annotation(
      level: judged.failing ? .error : .warning, file: file, line: file == nil ? nil : frame?.line,
      title:
        "dealloctrace: \(finding.kind.title): \(finding.signature.title) (×\(finding.count))"
        + " [id:\(finding.id)]",
      message: lines.joined(separator: "\n"))
  }

  /// `path` as GitHub needs it: relative to ``workspace`` when one is set (`nil` when the
  /// path lies outside it), as it is otherwise. A relative `path` is taken relative to
  /// ``currentDirectory`` first.
  func placeable(_ path: String) -> String? {
    paths.relative(path)
  }

  private var paths: WorkspacePaths {
    WorkspacePaths(root: workspace, currentDirectory: currentDirectory)
  }
}
