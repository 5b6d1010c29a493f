/// What the reader keeps of one holders record, so that memory stays bounded whatever a
/// record holds. Beyond these, paths are counted in ``HolderReport/more``, steps in
/// ``HolderPath/omittedSteps`` and captured types in a last `"… N more"` entry.
public enum HolderLimits {
  /// Paths kept per record. The recorder writes at most its `max_paths` (a handful).
  public static let maximumPaths = 16
  /// Steps kept per path. The recorder's depth limit is about 6.
  public static let maximumSteps = 32
  /// Captured types kept per closure context.
  public static let maximumCaptures = 16
}
