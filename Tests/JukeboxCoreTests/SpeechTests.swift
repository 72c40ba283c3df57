import Glibc
import JukeboxSndFile
import JukeboxTestSupport
import Logging
import Testing
@testable import JukeboxCore
import JukeboxCoreTestSupport

/// Announcements: how their text is checked, how the engine is run (argument lists, a time
/// limit, its output checked), and the bounded cache of what it made. The engine is the real
/// espeak-ng, or a small shell program standing in for a broken one.
@Suite("Spoken announcements", .timeLimit(.minutes(1)))
struct SpeechTests {
    static let espeak = access("/usr/bin/espeak-ng", X_OK) == 0
    static let noEspeak = Comment(rawValue: "espeak-ng is not installed (apt install espeak-ng); CI installs it")
    let folder: TemporaryDirectory

    init() throws { folder = try TemporaryDirectory() }

    func synthesizer(_ command: [String] = SpeechSettings.defaultCommand, timeLimit: Duration = .seconds(30), limits: SpeechCache.Limits = .init()) -> SpeechSynthesizer {
        SpeechSynthesizer(
            settings: SpeechSettings(command: command, timeLimit: timeLimit), cache: SpeechCache(folder: folder.file("speech"), limits: limits),
            decoder: SndFileDecoder(), logger: Logger(label: "test"))
    }

    /// Runs the synthesizer while `body` runs.
    func running<T: Sendable>(_ speech: SpeechSynthesizer, _ body: () async throws -> T) async rethrows -> T {
        let service = Task { await speech.run() }
        defer { service.cancel() }
        return try await body()
    }

    func failureOf(_ speech: SpeechSynthesizer, _ text: String) async -> SpeechFailure? {
        do {
            _ = try await speech.audio(for: .spoken(text))
            return nil
        } catch {
            return error
        }
    }

    // MARK: - Text

    @Test func textIsTidiedAndBoundedForEveryFrontEnd() {
        #expect(SpeechText.check("  Dinner\n is\tready \u{7}  ") == .success("Dinner is ready"))
        #expect(SpeechText.check(" \n\t ") == .failure(.empty))
        #expect(SpeechText.check("") == .failure(.empty))
        let limit = SpeechSettings.maxTextLength
        #expect(SpeechText.check(String(repeating: "a", count: limit - 1)) == .success(String(repeating: "a", count: limit - 1)))
        #expect(SpeechText.check(String(repeating: "a", count: limit)) == .success(String(repeating: "a", count: limit)))
        #expect(SpeechText.check(String(repeating: "a", count: limit + 1)) == .failure(.tooLong))
        #expect(SpeechText.check(String(repeating: "ab ", count: 400_000)) == .failure(.tooLong))
        #expect(SpeechText.Problem.tooLong.description.contains("1000 characters"))
    }

    @Test func anAnnouncementIsShownByItsFirstWords() {
        let short = PlayableClip.spoken("Dinner is ready")
        #expect(short.id == "say" && short.title == "say: Dinner is ready" && short.speech == "Dinner is ready")
        let long = PlayableClip.spoken(String(repeating: "x", count: 200))
        #expect(long.title == "say: " + String(repeating: "x", count: 59) + "…")
    }

    @Test func theEngineGetsItsWordsAndTheTextNeverAsAnOption() {
        let piper = SpeechSettings(command: ["piper", "--model", "/m.onnx", "--output_file={out}"])
        #expect(!piper.textInArguments)
        #expect(piper.arguments(text: "hi", out: "/c/x.wav") == ["piper", "--model", "/m.onnx", "--output_file=/c/x.wav"])
        let espeak = SpeechSettings(command: ["espeak-ng", "-w", "{out}", "{text}"])
        #expect(espeak.textInArguments)
        #expect(espeak.arguments(text: "--help", out: "/o.wav") == ["espeak-ng", "-w", "/o.wav", " --help"])
        #expect(espeak.arguments(text: "$(rm -rf ~)", out: "/o.wav").last == "$(rm -rf ~)")
    }

    // MARK: - Cache

    @Test func filesAreNamedByA128BitFingerprintOfEngineAndText() {
        let cache = SpeechCache(folder: "/c")
        // FNV-1a 128 of "a", the published test value.
        #expect(cache.path(for: "a", command: []) == "/c/d228cb696f1a8caf78912b704e4a8964.wav")
        #expect(cache.path(for: "hi", command: ["espeak-ng"]) != cache.path(for: "hi", command: ["piper"]))
        #expect(cache.path(for: "hi", command: ["a", "b"]) != cache.path(for: "hi", command: ["ab"]))
        #expect(SpeechCache.folder(besideState: "/var/lib/jukeboxd/demo.json") == "/var/lib/jukeboxd/demo.speech")
        #expect(SpeechCache(folder: "rel").folder.hasPrefix("/"))
    }

    @Test(arguments: [(files: 3, bytes: 1 << 20, made: 3, kept: 3), (files: 3, bytes: 1 << 20, made: 4, kept: 3), (files: 3, bytes: 1 << 20, made: 2, kept: 2),
                      (files: 100, bytes: 2500, made: 3, kept: 2), (files: 100, bytes: 3000, made: 3, kept: 3)])
    func theCacheKeepsTheMostRecentlyUsedWithinItsLimits(_ limits: (files: Int, bytes: Int, made: Int, kept: Int)) throws {
        let cache = SpeechCache(folder: folder.file("speech"), limits: .init(files: limits.files, bytes: limits.bytes))
        try cache.makeFolder()
        // 1 000 bytes each, used one second apart; the first is then used again, so the
        // second is the least recently used.
        var paths: [String] = []
        for index in 0..<limits.made {
            let path = cache.path(for: "text \(index)", command: ["e"])
            _ = try folder.write("speech/" + FilePath.lastComponent(path), [UInt8](repeating: 1, count: 1000))
            var times = [timespec(tv_sec: 1_000_000 + index, tv_nsec: 0), timespec(tv_sec: 1_000_000 + index, tv_nsec: 0)]
            #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
            paths.append(path)
        }
        #expect(cache.hit(paths[0]))
        _ = try folder.write("speech/other.partial.wav", [UInt8](repeating: 1, count: 10))
        cache.trim(keeping: paths.last!)
        let left = paths.filter { FilePath.size($0) != nil }
        #expect(left.count == limits.kept, "\(left)")
        #expect(left.contains(paths[0]) && left.contains(paths.last!), "the one just used and the one just made stay")
        if limits.kept < limits.made { #expect(!left.contains(paths[1]), "the least recently used went first") }
        #expect(FilePath.size(folder.file("speech/other.partial.wav")) != nil, "a file being made is not the cache's to remove")
        #expect(SpeechCache.Limits() == .init(files: 100, bytes: 50 << 20))
    }

    // MARK: - The engine

    @Test(.enabled(if: Self.espeak, Self.noEspeak))
    func espeakMakesTheAudioOnceAndTheCacheServesItAfter() async throws {
        let log = folder.file("runs.log")
        // espeak-ng itself, counted: each run appends a line.
        let speech = synthesizer(["/bin/sh", "-c", "echo run >> \"$1\"; exec espeak-ng -w \"$2\" --stdin", "sh", log, "{out}"])
        let made = try await running(speech) { try await speech.audio(for: .spoken("Dinner is ready")) }
        #expect(made.source.path.hasPrefix(folder.file("speech/")) && made.source.within == speech.cache.folder)
        let probed = try await SndFileDecoder().probe(made.source)
        #expect(probed.duration > .milliseconds(500) && probed.duration < .seconds(3), "\(probed)")
        let again = try await running(speech) { try await speech.audio(for: .spoken("Dinner is ready")) }
        #expect(again.source == made.source)
        #expect(try folder.read("runs.log").count == 4, "espeak-ng ran once")
        #expect(access(speech.cache.partialPath(for: made.source.path), F_OK) != 0)
        var info = stat()
        #expect(stat(speech.cache.folder, &info) == 0 && info.st_mode & 0o777 == 0o700)
    }

    @Test func aMissingEngineFailsWithWhatToDo() async throws {
        let speech = synthesizer(["/nonexistent/tts-engine", "-w", "{out}"])
        let failure = try #require(await running(speech) { await failureOf(speech, "hello") })
        #expect(failure.reason.contains("/nonexistent/tts-engine could not be started"), "\(failure)")
        #expect(failure.reason.contains("apt install espeak-ng") && failure.reason.contains("tts.command"), "\(failure)")
    }

    @Test func anEngineThatHangsIsStoppedAtItsLimit() async throws {
        // The engine becomes a sleep far longer than the suite's own limit, and says which
        // process it is, so the test sees that process end rather than timing the wait.
        let pidFile = folder.file("engine.pid")
        let speech = synthesizer(["/bin/sh", "-c", "echo $$ > \"$1\"; exec sleep 600", "sh", pidFile, "{out}"], timeLimit: .seconds(1))
        let failure = try #require(await running(speech) { await failureOf(speech, "hello") })
        #expect(failure.reason == "the speech engine /bin/sh took longer than 1s and was stopped (tts.timeLimit)")
        let pid = try #require(pid_t(String(decoding: folder.read("engine.pid"), as: UTF8.self).filter(\.isNumber)))
        #expect(kill(pid, 0) == -1 && errno == ESRCH, "the engine was killed and reaped, not left running")
        #expect(opendirCount(folder.file("speech")) == 0, "nothing of the stopped run is kept")
    }

    @Test func anEngineThatFailsOrWritesNoAudioIsReported() async throws {
        let failing = synthesizer(["/bin/sh", "-c", "echo no voice installed >&2; exit 2", "sh", "{out}"])
        #expect(await running(failing) { await failureOf(failing, "a") }?.reason == "the speech engine /bin/sh failed with status 2: no voice installed")
        let silent = synthesizer(["/bin/true", "{out}"])
        #expect(await running(silent) { await failureOf(silent, "a") }?.reason == "the speech engine /bin/true wrote no audio file")
        let text = synthesizer(["/bin/sh", "-c", "echo hello > \"$1\"", "sh", "{out}"])
        let notAudio = await running(text) { await failureOf(text, "a") }
        #expect(notAudio?.reason.hasPrefix("the speech engine /bin/sh did not write audio that can be played") == true, "\(String(describing: notAudio))")
        let tooLarge = synthesizer(["/bin/sh", "-c", "head -c \(SpeechCache.maxFileSize + 1) /dev/zero > \"$1\"", "sh", "{out}"])
        #expect(await running(tooLarge) { await failureOf(tooLarge, "a") }?.reason.contains("more than the 26214400 an announcement may be") == true)
        // Nothing failed is kept, not even in part.
        #expect(opendirCount(folder.file("speech")) == 0)
    }

    @Test func waitingForAnAnnouncementStopsWhenItIsSkipped() async throws {
        let speech = synthesizer(["/bin/sh", "-c", "sleep 3", "sh", "{out}"], timeLimit: .seconds(5))
        await running(speech) {
            let waiting = Task { try await speech.audio(for: .spoken("slow")) }
            while await speech.pendingCount > 0 { await Task.yield() }
            waiting.cancel()
            let result = await waiting.result
            #expect(throws: SpeechFailure.cancelled) { try result.get() }
        }
    }

    @Test func atMost32TextsWaitToBeMadeAhead() async throws {
        let speech = synthesizer(["/bin/sh", "-c", "sleep 5", "sh", "{out}"], timeLimit: .seconds(6))
        await speech.prepare("first")
        for index in 0..<SpeechSynthesizer.maxPending + 10 { await speech.prepare("text \(index)") }
        #expect(await speech.pendingCount == SpeechSynthesizer.maxPending)
        // The same text is never in line twice.
        await speech.prepare("first")
        #expect(await speech.pendingCount == SpeechSynthesizer.maxPending)
    }
}

private func opendirCount(_ path: String) -> Int {
    guard let directory = opendir(path) else { return 0 }
    defer { closedir(directory) }
    var count = 0
    while let item = readdir(directory) {
        let name = withUnsafeBytes(of: item.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != "." && name != ".." { count += 1 }
    }
    return count
}
