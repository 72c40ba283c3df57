/// Walks the JSON tree, filling in defaults and collecting problems by field path.
struct SessionReader {
    let sessionPath: String
    var problems: [(field: String, message: String)] = []
    /// The clips and cue that could be read, even when other fields have problems, so
    /// `--check` can open their files in the same run.
    var clips: [Clip] = []
    var cue: ClipSource?
    /// The first field that uses a sun time, so a missing `location` is reported there.
    var firstSunTime: String?
    /// Where each value starts in the file, by field path, when the order of an object's keys
    /// matters (`ordered(_:at:)`).
    var keyOffsets: [String: Int] = [:]

    init(sessionPath: String) { self.sessionPath = sessionPath }

    mutating func problem(_ field: String, _ message: String) {
        problems.append((field, message))
    }

    static let sessionKeys = ["version", "name", "clipsDirectory", "device", "output", "interval", "activeHours", "duration", "cue", "volume", "leadIn", "fade", "keepDeviceOpen", "maxUploadSize", "maxUploadLength", "http", "mqtt", "esphome", "hooks", "tts", "location", "holidays", "atGrace", "afterCut", "missed", "playLateWithin", "duck", "bed", "quiet", "maxVolume", "loudness", "plans", "days", "calendars", "alerts", "clips"]
    static let atKeys = ["time", "dates", "except"]
    /// At most this many `at` times on one clip (every minute of an hour, and then some).
    static let maxAtTimes = 100
    /// At most this many `at` times in the whole session: each is worked out up to 400 days
    /// ahead whenever the session is read, and again daily while it has no moment in that time.
    static let maxAtTimesInAll = 2000
    static let windowKeys = ["from", "to", "days", "dates", "except"]
    static let volumeStepKeys = ["from", "level"]
    /// A volume schedule has from 1 to this many steps (one every hour, and then some).
    static let maxVolumeSteps = 48

    mutating func session(from document: JSONValue) -> Session? {
        guard let fields = object(document, at: "", allowed: Self.sessionKeys) else { return nil }
        if let version = fields["version"], number(version, at: "version") != 1 {
            problem("version", "\(version.shortDescription) is not a format this jukeboxd reads (expected 1)")
        }
        let sessionDirectory = FilePath.directory(of: FilePath.absolute(sessionPath))
        let clipsDirectory = FilePath.normalize(
            FilePath.join(sessionDirectory, fields["clipsDirectory"].flatMap { nonEmptyString($0, at: "clipsDirectory") } ?? "."))
        if fields["clipsDirectory"] != nil, let trouble = FilePath.folderProblem(clipsDirectory) {
            problem("clipsDirectory", "\"\(clipsDirectory)\" \(trouble)")
        }
        let name = fields["name"].flatMap { nonEmptyString($0, at: "name") }
            ?? FilePath.removingExtension(FilePath.lastComponent(sessionPath))
        let output = self.output(fields, sessionDirectory: sessionDirectory)
        let interval = fields["interval"].flatMap { self.interval($0) } ?? Session.defaultInterval
        let activeHours = fields["activeHours"].map { windows($0, at: "activeHours") } ?? []
        let quiet = fields["quiet"].map { windows($0, at: "quiet") } ?? []
        let duration = fields["duration"].flatMap { self.duration($0, at: "duration") }
        if duration == .zero { problem("duration", "must be longer than 0s (leave it out to run until stopped)") }
        let cue = fields["cue"].flatMap { nonEmptyString($0, at: "cue") }
            .map { ClipSource(file: $0, path: FilePath.normalize(FilePath.join(clipsDirectory, $0))) }
        var volume = 1.0
        var volumeSchedule: [VolumeStep] = []
        if case .array = fields["volume"] {
            volumeSchedule = volumeSteps(fields["volume"]!)
            volume = volumeSchedule.first?.level ?? 1
        } else if let value = fields["volume"], let number = number(value, at: "volume") {
            if (0...1).contains(number) { volume = number } else { problem("volume", "\(value.shortDescription) is out of range (expected 0 to 1, or a list of steps such as [{\"from\": \"07:00\", \"level\": 0.8}])") }
        }
        var maxVolume = 1.0
        if let value = fields["maxVolume"], let number = number(value, at: "maxVolume") {
            if (0...1).contains(number) { maxVolume = number } else { problem("maxVolume", "\(value.shortDescription) is out of range (expected 0 to 1)") }
        }
        if fields["volume"] == nil {
            // No volume given: it starts at the cap.
            volume = maxVolume
        } else if volumeSchedule.isEmpty, volume > maxVolume {
            problem("volume", "\(volume) is above maxVolume (\(maxVolume)); lower it, or raise maxVolume")
        }
        for (index, step) in volumeSchedule.enumerated() where step.level > maxVolume {
            problem("volume[\(index)].level", "\(step.level) is above maxVolume (\(maxVolume)); lower it, or raise maxVolume")
        }
        var loudness: Double?
        if let value = fields["loudness"], let number = number(value, at: "loudness") {
            if Session.loudnessRange.contains(number) { loudness = number } else {
                problem("loudness", "\(value.shortDescription) is out of range (expected \(Int(Session.loudnessRange.lowerBound)) to \(Int(Session.loudnessRange.upperBound)) LUFS, such as -18)")
            }
        }
        let playback = playbackOptions(fields)
        let web = fields["http"].flatMap { self.web($0, sessionDirectory: sessionDirectory) }
        let mqtt = fields["mqtt"].flatMap { self.mqtt($0, sessionDirectory: sessionDirectory, name: name) }
        let esphome = fields["esphome"].flatMap { self.esphome($0, sessionName: name) }
        let hooks = fields["hooks"].map { self.hooks($0) } ?? Hooks()
        let speech = fields["tts"].map { self.speech($0) } ?? SpeechSettings()
        let duck = fields["duck"].flatMap { self.duck($0, sessionDirectory: sessionDirectory) }
        let bed = fields["bed"].flatMap { self.bed($0, sessionDirectory: sessionDirectory) }
        if bed != nil, playback.keepDeviceOpen == .always {
            problem("keepDeviceOpen", "\"always\" is not needed with a bed: the bed keeps the device open and fed; remove it")
        }
        var maxUploadSize = Session.defaultMaxUploadSize
        if let value = fields["maxUploadSize"], let number = number(value, at: "maxUploadSize") {
            let range = Session.maxUploadSizeRange
            if number == number.rounded(), Double(range.lowerBound)...Double(range.upperBound) ~= number { maxUploadSize = Int(number) } else {
                problem("maxUploadSize", "\(value.shortDescription) is not a whole number of bytes from \(range.lowerBound) to \(range.upperBound)")
            }
        }
        var maxUploadLength = Session.defaultMaxUploadLength
        if let value = fields["maxUploadLength"], let length = self.duration(value, at: "maxUploadLength") {
            let range = Session.maxUploadLengthRange
            if range.contains(length) { maxUploadLength = length } else {
                problem("maxUploadLength", "\(value.shortDescription) is not from \(DurationText.format(range.lowerBound)) to \(DurationText.format(range.upperBound))")
            }
        }
        let location = fields["location"].flatMap { self.location($0) }
        let holidays = fields["holidays"].map { dateRules($0, at: "holidays", allowHolidays: false) } ?? []
        var atGrace = Session.defaultAtGrace
        if let value = fields["atGrace"], let grace = self.duration(value, at: "atGrace") {
            if Session.atGraceRange.contains(grace) { atGrace = grace } else {
                problem("atGrace", "\(value.shortDescription) is out of range (0s to 1h: how late an at time may still play after a short outage)")
            }
        }
        var afterCut = AfterCut.resume
        if let value = fields["afterCut"] {
            let choices = AfterCut.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            if case .string(let text) = value, let choice = AfterCut(rawValue: text) { afterCut = choice } else {
                problem("afterCut", "\(value.shortDescription) is not one of \(choices) (what becomes of a clip an urgent one cuts)")
            }
        }
        var missed = MissedTimes.skip
        if let value = fields["missed"] {
            switch value {
            case .string("skip"): break
            case .string("play-late"): missed = .playLate(within: Session.defaultPlayLateWithin)
            default: problem("missed", "\(value.shortDescription) is not \"skip\" or \"play-late\" (what becomes of a fixed time that could not play on time)")
            }
        }
        if let value = fields["playLateWithin"], let within = self.duration(value, at: "playLateWithin") {
            let range = Session.playLateWithinRange
            if !range.contains(within) {
                problem("playLateWithin", "\(value.shortDescription) is not from \(DurationText.format(range.lowerBound)) to \(DurationText.format(range.upperBound)) (how late a missed fixed time may still play)")
            } else if case .playLate = missed {
                missed = .playLate(within: within)
            } else {
                problem("playLateWithin", "applies only with \"missed\": \"play-late\"; add that, or leave playLateWithin out")
            }
        }
        let clips = clipList(fields["clips"], clipsDirectory: clipsDirectory)
        if let firstSunTime, location == nil, fields["location"] == nil {
            problem(firstSunTime, "a sun time needs the session's location: add \"location\": {\"latitude\": 52.37, \"longitude\": 4.89} with your own place (degrees north and east; a map shows them)")
        }
        let dayPlans = self.dayPlans(fields, clips: clips, sessionDirectory: sessionDirectory)
        let alerts = fields["alerts"].map { self.alerts($0, clips: clips) } ?? []
        self.clips = clips
        self.cue = cue
        guard problems.isEmpty else { return nil }
        var session = Session(
            name: name, sourcePath: sessionPath, clipsDirectory: clipsDirectory, output: output, interval: interval,
            activeHours: activeHours, duration: duration, cue: cue, volume: volume, playback: playback, clips: clips, maxUploadSize: maxUploadSize, maxUploadLength: maxUploadLength, web: web, mqtt: mqtt, hooks: hooks, speech: speech,
            location: location, holidays: holidays, atGrace: atGrace, quiet: quiet)
        session.maxVolume = maxVolume
        session.loudness = loudness
        session.volumeSchedule = volumeSchedule
        session.afterCut = afterCut
        session.missed = missed
        session.duck = duck
        session.bed = bed
        session.dayPlans = dayPlans
        session.alerts = alerts
        session.esphome = esphome
        return session
    }

    /// `volume` as a schedule: `[{"from": "07:00", "level": 0.8}, {"from": "sunset", "level": 0.4}]`.
    mutating func volumeSteps(_ value: JSONValue) -> [VolumeStep] {
        guard case .array(let items) = value, (1...Self.maxVolumeSteps).contains(items.count) else {
            problem("volume", "a volume schedule lists from 1 to \(Self.maxVolumeSteps) steps such as {\"from\": \"07:00\", \"level\": 0.8}")
            return []
        }
        var steps: [VolumeStep] = []
        var indexOf: [DayTime: Int] = [:]
        for (index, item) in items.enumerated() {
            let field = "volume[\(index)]"
            guard let fields = object(item, at: field, allowed: Self.volumeStepKeys) else { continue }
            let from = time(fields["from"], at: "\(field).from")
            var level: Double?
            if let value = fields["level"] {
                if let number = number(value, at: "\(field).level") {
                    if (0...1).contains(number) { level = number } else { problem("\(field).level", "\(value.shortDescription) is out of range (expected 0 to 1)") }
                }
            } else {
                problem("\(field).level", "missing (expected a volume from 0 to 1, such as 0.8)")
            }
            guard let from, let level else { continue }
            if let earlier = indexOf[from] {
                problem("\(field).from", "\(from) is also the time of volume[\(earlier)]; each step needs its own time")
                continue
            }
            indexOf[from] = index
            steps.append(VolumeStep(from: from, level: level))
        }
        return steps
    }


    /// The words of an argument list, or nil (with a problem for each bad word).
    mutating func words(_ items: [JSONValue], at field: String) -> [String]? {
        var words: [String] = []
        for (index, item) in items.enumerated() {
            guard case .string(let word) = item, !word.isEmpty, word.utf8.count <= Hooks.maxArgumentLength, !word.contains("\u{0}") else {
                problem("\(field)[\(index)]", "\(item.shortDescription) is not a word of 1 to \(Hooks.maxArgumentLength) bytes")
                continue
            }
            words.append(word)
        }
        return words.count == items.count ? words : nil
    }

    mutating func playbackOptions(_ fields: [String: JSONValue]) -> PlaybackOptions {
        var options = PlaybackOptions()
        if let value = fields["leadIn"], let leadIn = duration(value, at: "leadIn") {
            if leadIn <= .seconds(10) { options.leadIn = leadIn } else {
                problem("leadIn", "\(value.shortDescription) is too long (at most 10s; about 1s wakes most receivers)")
            }
        }
        if let value = fields["fade"], let fade = duration(value, at: "fade") {
            if fade <= .milliseconds(500) { options.fade = fade } else {
                problem("fade", "\(value.shortDescription) is too long (at most 500ms; a few ms is enough to stop a click)")
            }
        }
        if let value = fields["keepDeviceOpen"] {
            let choices = PlaybackOptions.KeepDeviceOpen.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
            if case .string(let text) = value, let hold = PlaybackOptions.KeepDeviceOpen(rawValue: text) { options.keepDeviceOpen = hold } else {
                problem("keepDeviceOpen", "\(value.shortDescription) is not \(choices)")
            }
        }
        return options
    }

    mutating func clipList(_ value: JSONValue?, clipsDirectory: String) -> [Clip] {
        guard let value else { problem("clips", "missing (list the session's clips, each with a \"file\")"); return [] }
        guard case .array(let items) = value else { problem("clips", "\(value.shortDescription) is not a list of clips"); return [] }
        if items.isEmpty { problem("clips", "is empty (a session needs at least one clip)") }
        var clips: [Clip] = []
        var firstUse: [String: Int] = [:]
        for (index, item) in items.enumerated() {
            let field = "clips[\(index)]"
            guard let fields = object(item, at: field, allowed: Clip.fields) else { continue }
            guard let fileValue = fields["file"] else { problem("\(field).file", "missing (the clip's audio file)"); continue }
            guard let file = nonEmptyString(fileValue, at: "\(field).file") else { continue }
            let id = fields["id"].flatMap { nonEmptyString($0, at: "\(field).id") } ?? Self.defaultID(file: file)
            if let earlier = firstUse[id] {
                problem(fields["id"] == nil ? "\(field).file" : "\(field).id", "id \"\(id)\" is already used by clips[\(earlier)] (ids must be unique; set \"id\")")
            } else {
                firstUse[id] = index
            }
            var clip = Clip(id: id, source: ClipSource(file: file, path: FilePath.normalize(FilePath.join(clipsDirectory, file))))
            clip.title = fields["title"].flatMap { nonEmptyString($0, at: "\(field).title") } ?? id
            if let value = fields["weight"], let weight = number(value, at: "\(field).weight") {
                if weight == weight.rounded(), (1...1000).contains(weight) { clip.weight = Int(weight) } else {
                    problem("\(field).weight", "\(value.shortDescription) is not a whole number from 1 to 1000")
                }
            }
            if let value = fields["gain"], let gain = number(value, at: "\(field).gain") {
                if (-60...20).contains(gain) { clip.gainDecibels = gain } else {
                    problem("\(field).gain", "\(value.shortDescription) dB is out of range (expected -60 to 20)")
                }
            }
            clip.windows = fields["windows"].map { windows($0, at: "\(field).windows") } ?? []
            clip.dates = dateFilter(fields, at: field)
            if let value = fields["at"] {
                clip.at = fixedTimes(value, at: "\(field).at")
                clip.isShuffled = fields["weight"] != nil
            }
            if let value = fields["priority"] {
                let choices = Clip.Priority.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
                if case .string(let text) = value, let priority = Clip.Priority(rawValue: text) {
                    clip.priority = priority
                    if priority == .now, fields["at"] == nil {
                        problem("\(field).priority", "\"now\" is for a clip's at times, and this clip has none: add \"at\", or ask for it with play --now")
                    }
                } else {
                    problem("\(field).priority", "\(value.shortDescription) is not \(choices)")
                }
            }
            if let value = fields["duck"] {
                if case .bool(let ducks) = value { clip.ducks = ducks } else { problem("\(field).duck", "\(value.shortDescription) is not true or false") }
            }
            if let value = fields["enabled"] {
                if case .bool(let enabled) = value { clip.enabled = enabled } else { problem("\(field).enabled", "\(value.shortDescription) is not true or false") }
            }
            clips.append(clip)
        }
        let times = clips.reduce(0) { $0 + $1.at.count }
        if times > Self.maxAtTimesInAll {
            problem("clips", "the clips have \(times) at times in all, more than the \(Self.maxAtTimesInAll) a session may have; an hourly time such as *:00 counts once")
        }
        return clips
    }

    /// What is wrong with `value` as a list of 1 to `limit` `items` (`example` shows some;
    /// `described`: the items as the message names them, if more than their noun).
    static func listProblem(_ value: JSONValue, of items: String, described: String? = nil, limit: Int, example: String) -> String {
        let named = described ?? items
        guard case .array(let list) = value else { return "\(value.shortDescription) is not a list of 1 to \(limit) \(named) (such as \(example))" }
        if list.isEmpty { return "is empty: give 1 to \(limit) \(named) (such as \(example)), or leave it out" }
        return "has \(list.count) \(items), more than the \(limit) it may have"
    }

    /// A clip without an `id` is named after its file, without folders or extension.
    static func defaultID(file: String) -> String { FilePath.removingExtension(FilePath.lastComponent(file)) }

    mutating func duration(_ value: JSONValue, at field: String) -> Duration? {
        let parsed: Result<Duration, DurationText.Invalid>
        switch value {
        case .string(let text): parsed = DurationText.check(text)
        case .number(let seconds): parsed = DurationText.checkSeconds(seconds)
        default: parsed = .failure(.notADuration)
        }
        switch parsed {
        case .success(let duration):
            return duration
        case .failure(.tooLong):
            problem(field, "\(value.shortDescription) is too long (at most \(DurationText.maximumText))")
        case .failure(.notADuration):
            problem(field, "\(value.shortDescription) is not a duration (expected e.g. \"45s\", \"3m\", \"1h30m\" or a number of seconds)")
        }
        return nil
    }

    mutating func object(_ value: JSONValue, at field: String, allowed: [String]) -> [String: JSONValue]? {
        guard case .object(let fields) = value else {
            problem(field, "\(value.shortDescription) is not an object")
            return nil
        }
        for key in fields.keys.sorted() where !allowed.contains(key) {
            let suggestion = allowed.min { editDistance($0, key) < editDistance($1, key) }
                .flatMap { editDistance($0, key) <= 2 ? " (did you mean \"\($0)\"?)" : nil } ?? ""
            problem(field.isEmpty ? key : "\(field).\(key)", "unknown key\(suggestion)")
        }
        return fields
    }

    mutating func nonEmptyString(_ value: JSONValue, at field: String) -> String? {
        guard case .string(let text) = value, !text.isEmpty else {
            problem(field, "\(value.shortDescription) is not a non-empty string")
            return nil
        }
        return text
    }

    mutating func number(_ value: JSONValue, at field: String) -> Double? {
        guard case .number(let number) = value else {
            problem(field, "\(value.shortDescription) is not a number")
            return nil
        }
        return number
    }
}
