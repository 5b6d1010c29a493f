/// A document that keeps its editor, whose editor keeps it back: a cycle once linked.
public final class LeakyDocument {
  public var editor: LeakyEditor?
  public init() {}
}

/// The other end of the cycle.
public final class LeakyEditor {
  public var document: LeakyDocument?
  public init() {}
}

/// Opens a document in an editor, leaking both (the editor should hold it weakly).
public func openDocument() -> Int {
  let document = LeakyDocument()
  let editor = LeakyEditor()
  document.editor = editor
  editor.document = document
  return 1
}
