import DeallocLog

extension Finding {
  /// The frame whose file and line place this finding in the source (for JUnit's `file`
  /// and `line`, and GitHub's annotation position): the first of the signature frames,
  /// then of the caller frames, with a file that `accepts` takes.
  ///
  /// Why not the enqueue stack's first frame with a file: those are the queue's and the
  /// tracer's own frames, which would point every such finding at `DeallocQueue.enqueue`.
  func callerSourceFrame(where accepts: (String) -> Bool = { _ in true }) -> Frame? {
    let callers = RenderingSupport.callerFrames(stack, limit: stack.count).frames
    return (signature.frames + callers).first { $0.file.map(accepts) ?? false }
  }
}
