/// A whole number of seconds as the session file writes a length, `1h30m`, `45s`, `2h5s`:
/// what the daemon's messages and the client's output both show.
public enum DurationWords {
    public static func text(seconds total: Int64) -> String {
        let (hours, minutes, seconds) = (total / 3600, total / 60 % 60, total % 60)
        var text = ""
        if hours > 0 { text += "\(hours)h" }
        if minutes > 0 { text += "\(minutes)m" }
        if seconds > 0 { text += "\(seconds)s" }
        return text.isEmpty ? "0s" : text
    }
}
