/// Counts in words for messages.
public enum Plural {
    /// "1 clip", "7 clips".
    public static func count(_ count: Int, _ noun: String) -> String { count == 1 ? "1 \(noun)" : "\(count) \(noun)s" }
}
