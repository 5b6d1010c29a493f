/// The analysis half of dealloctrace: reading v1 logs, deriving object states, rendering.
public enum DeallocAnalysis {
  /// The version of the dealloctrace tools.
  public static let toolVersion = "0.1.0"
}
