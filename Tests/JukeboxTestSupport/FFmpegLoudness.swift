import Foundation

/// Loudness as ffmpeg's `ebur128` filter measures it: a measurement that shares no code with
/// the daemon's (libebur128), to check it against.
public enum FFmpegLoudness {
    public struct Figures: Sendable, CustomStringConvertible {
        /// LUFS.
        public var integrated: Double
        /// dBTP.
        public var truePeak: Double
        public var description: String { "\(integrated) LUFS, true peak \(truePeak) dBTP" }
    }

    /// `input`: ffmpeg's arguments before `-i` and the file (`["-f", "s16le", "-ar", "48000",
    /// "-ac", "2", "-i", path]`, or `["-i", path]` for a file with a header). `dualMono`: a
    /// mono input is measured as played on two channels.
    public static func measure(_ input: [String], dualMono: Bool = false) async throws -> Figures {
        let filter = "ebur128=peak=true" + (dualMono ? ":dualmono=true" : "")
        let output = try await Tool.run("ffmpeg", ["-hide_banner", "-nostats"] + input + ["-af", filter, "-f", "null", "-"])
        let lines = output.stderr.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let summary = lines.lastIndex(where: { $0.hasSuffix("Summary:") }) else {
            throw FFmpegLoudnessError(text: output.stderr)
        }
        func value(after heading: String, _ key: String) -> Double? {
            guard let start = lines[summary...].firstIndex(where: { $0.hasPrefix(heading) }),
                  let line = lines[start...].first(where: { $0.hasPrefix(key) }) else { return nil }
            return line.split(separator: " ").dropFirst().first.flatMap { Double($0) }
        }
        guard let integrated = value(after: "Integrated loudness:", "I:"), let peak = value(after: "True peak:", "Peak:") else {
            throw FFmpegLoudnessError(text: output.stderr)
        }
        return Figures(integrated: integrated, truePeak: peak)
    }
}

public struct FFmpegLoudnessError: Error, CustomStringConvertible {
    public var text: String
    public var description: String { "ffmpeg gave no ebur128 summary: \(text.suffix(600))" }
}
