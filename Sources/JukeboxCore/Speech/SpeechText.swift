/// The text of an announcement, checked the same way for every front end: line breaks, tabs
/// and other control characters become spaces, runs of spaces become one, and the result
/// must be 1 to `SpeechSettings.maxTextLength` characters.
public enum SpeechText {
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        case empty
        case tooLong

        public var description: String {
            switch self {
            case .empty: "the text to say is empty"
            case .tooLong: "the text to say is longer than \(SpeechSettings.maxTextLength) characters (split it into several announcements)"
            }
        }
    }

    public static func check(_ text: String) -> Result<String, Problem> {
        // Counting stops well past the limit, so a huge text is not walked whole.
        var words: [Substring] = []
        var length = 0
        for word in text.split(whereSeparator: { $0.isWhitespace || $0.unicodeScalars.allSatisfy { $0.properties.generalCategory == .control } }) {
            length += word.count + (words.isEmpty ? 0 : 1)
            words.append(word)
            if length > SpeechSettings.maxTextLength { return .failure(.tooLong) }
        }
        guard !words.isEmpty else { return .failure(.empty) }
        return .success(words.joined(separator: " "))
    }
}
