/// What kind of audio file some bytes look like, from their first bytes, for messages about a
/// file the decoder refused ("an M4A file (AAC audio, as phones record)").
public enum AudioFileKind {
    public static func describe(_ head: [UInt8]) -> String? {
        func starts(_ text: String, at offset: Int = 0) -> Bool {
            head.count >= offset + text.utf8.count && Array(head[offset..<(offset + text.utf8.count)]) == Array(text.utf8)
        }
        if starts("ftyp", at: 4) { return "an MP4/M4A file (AAC audio, as phones and voice memo apps record)" }
        if head.starts(with: [0x1A, 0x45, 0xDF, 0xA3]) { return "a WebM/Matroska file (Opus audio, as browsers record)" }
        if starts("OggS") { return "an Ogg file" }
        if starts("RIFF") { return "a RIFF/WAV file" }
        if starts("fLaC") { return "a FLAC file" }
        if starts("ID3") || (head.count >= 2 && head[0] == 0xFF && head[1] & 0xE0 == 0xE0) { return "an MP3 file" }
        if starts("#!AMR") { return "an AMR file (as some phones record calls)" }
        return nil
    }
}
