import DeallocLog

/// Source paths as CI outputs name them: relative to the workspace (the checkout), where
/// GitHub places annotations, GitLab links JUnit files and a Markdown comment reads well,
/// rather than the absolute paths of the machine that ran the tests.
///
/// The workspace is `$GITHUB_WORKSPACE`, else `$CI_PROJECT_DIR` (GitLab), else the current
/// directory. A path outside it (the toolchain, a dependency elsewhere) keeps its absolute
/// form in text, since it cannot be named relative to the checkout.
public struct WorkspacePaths: Sendable, Equatable {
  /// The checkout's absolute path; `nil` or empty leaves every path as it is.
  public var root: String?
  /// What a relative path (a suppressions file named on the command line) is relative to.
  public var currentDirectory: String?

  public init(root: String?, currentDirectory: String? = nil) {
    self.root = root
    self.currentDirectory = currentDirectory
  }

  /// The workspace of a CI job: `GITHUB_WORKSPACE`, else `CI_PROJECT_DIR`, else
  /// `currentDirectory`.
  public static func fromEnvironment(
    _ environment: [String: String], currentDirectory: String
  ) -> WorkspacePaths {
    let root = [environment["GITHUB_WORKSPACE"], environment["CI_PROJECT_DIR"]]
      .compactMap { $0 }.first { !$0.isEmpty }
    return WorkspacePaths(root: root ?? currentDirectory, currentDirectory: currentDirectory)
  }

  /// `path` relative to the workspace, `nil` when it lies outside. Without a workspace,
  /// `path` as it is. A relative `path` is taken relative to ``currentDirectory`` first.
  public func relative(_ path: String) -> String? {
    guard let root, !root.isEmpty else { return path }
    var absolute = path
    if !path.hasPrefix("/"), let currentDirectory {
      absolute =
        (currentDirectory.hasSuffix("/") ? currentDirectory : currentDirectory + "/") + path
    }
    let prefix = root.hasSuffix("/") ? root : root + "/"
    guard absolute.hasPrefix(prefix) else {
      // Already relative, with no directory to resolve it against: assume the checkout.
      return absolute.hasPrefix("/") ? nil : absolute
    }
    var inside = Substring(absolute.dropFirst(prefix.count))
    while inside.hasPrefix("./") { inside = inside.dropFirst(2) }
    return inside.isEmpty ? nil : String(inside)
  }

  /// `path` relative to the workspace when it lies inside, else as it is.
  public func display(_ path: String) -> String {
    relative(path) ?? path
  }

  /// `frame` with its file named by ``display(_:)``.
  func display(_ frame: Frame) -> Frame {
    guard let file = frame.file else { return frame }
    var frame = frame
    frame.file = display(file)
    return frame
  }
}
