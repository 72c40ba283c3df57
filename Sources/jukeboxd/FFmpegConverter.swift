import Glibc
import JukeboxCore
import JukeboxProtocol

/// Converts uploads libsndfile cannot read (a phone's M4A/AAC, a browser's WebM/Opus) to FLAC
/// with ffmpeg. ffmpeg runs from an argument list, never through a shell, with no input,
/// on its own thread, and is killed if it takes longer than `timeLimit(length:)`, or when the
/// daemon stops.
struct FFmpegConverter: AudioConverter {
    /// How long ffmpeg may take for an upload of at most `length` of audio: ten times faster
    /// than real time, and 10 s more. A Raspberry Pi converts a phone's AAC or a browser's
    /// Opus to FLAC at well over 30 times real time; an input that ffmpeg reads at the pace
    /// it plays (a live stream) is stopped close to the longest recording that is accepted.
    static func timeLimit(length: Duration) -> Duration { .seconds(10) + length / 10 }
    /// How much of ffmpeg's own message is kept for the error.
    static let maxMessage = 2048

    let executable: String
    private let queue = BlockingWorkQueue(label: "jukebox.ffmpeg")

    /// ffmpeg from `PATH`, or nil when it is not installed.
    static func find(environment: [String: String] = ProcessEnvironment.current) -> FFmpegConverter? {
        let folders = (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":")
        for folder in folders where access("\(folder)/ffmpeg", X_OK) == 0 {
            return FFmpegConverter(executable: "\(folder)/ffmpeg")
        }
        return nil
    }

    /// The containers a recording or an upload can honestly be, by ffmpeg's names for their
    /// demuxers: MP4/M4A/MOV, Matroska/WebM, Ogg, MP3, raw AAC (ADTS), FLAC and WAV. Nothing
    /// that names other files (HLS and other playlists, concat, image sequences) is read.
    static let containers = "mov,matroska,ogg,mp3,aac,flac,wav"

    func convertToFLAC(_ input: String, _ output: String, limits: UploadLimits) async throws(ConversionFailure) {
        // -t: a second past the longest clip accepted, so a longer one is seen to be longer
        // and refused rather than cut; -fs: no more bytes than an upload may bring. The one
        // input is read as a file, in one of `containers`, and nothing else is opened: an
        // upload that names another file is refused alike whether that file exists or not.
        let seconds = limits.length.components.seconds + 1
        let arguments = [
            executable, "-nostdin", "-hide_banner", "-loglevel", "error", "-n",
            "-protocol_whitelist", "file", "-format_whitelist", Self.containers, "-i", input,
            "-map", "0:a:0", "-map_metadata", "-1", "-t", "\(seconds)", "-c:a", "flac", "-fs", "\(limits.size)", "-f", "flac", output,
        ]
        let limit = Self.timeLimit(length: limits.length)
        let result = await queue.run { () -> Result<ChildProcess.Outcome, ChildProcess.SpawnFailure> in
            Result { () throws(ChildProcess.SpawnFailure) in try ChildProcess.run(arguments, timeLimit: limit, outputLimit: Self.maxMessage) }
        }
        switch result {
        case .failure(let failure): throw ConversionFailure("\(failure)")
        case .success(let ran):
            let said = ran.output.split(separator: "|").last.map { ": \($0.drop { $0 == " " })" } ?? ""
            switch ran.ending {
            case .exited(0): return
            case .exited(let status): throw ConversionFailure("ffmpeg exited with status \(status)\(said)")
            case .signalled(let signal): throw ConversionFailure("ffmpeg was killed by signal \(signal)")
            case .timedOut: throw ConversionFailure("ffmpeg took longer than \(DurationText.format(limit)) and was stopped")
            case .stopped: throw ConversionFailure("ffmpeg was ended: jukeboxd is stopping")
            }
        }
    }
}
