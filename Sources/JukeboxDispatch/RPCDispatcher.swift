import JukeboxCore
import JukeboxProtocol

/// Maps one request line to its response line: JSON-RPC 2.0 framing, method dispatch and
/// parameter types. Every rule (limits, durability) is the core's; this only translates,
/// and never touches a socket, so every method and every error is tested without I/O.
public struct RPCDispatcher: Sendable {
    /// A request line longer than this is refused and the connection closed.
    public static let maxLineLength = 65_536

    public struct Reply: Sendable {
        /// The response line without its newline; nil for a notification (a request without id).
        public var line: [UInt8]?
        /// The connection asked to receive events from now on.
        public var subscribe = false
        /// The request changed state: the reply may be sent only once this returns.
        public var commit: (@Sendable () async throws(JukeboxError) -> Void)?
        /// The response to send instead if the commit fails, saying why.
        public var lineIfCommitFails: (@Sendable (JukeboxError) -> [UInt8])?
        /// The request accepted an upload: this many raw bytes follow it on the connection.
        public var rawBytes: Int?

        public init(line: [UInt8]?, subscribe: Bool = false) {
            self.line = line
            self.subscribe = subscribe
        }

        /// Waits for the commit, if any, and returns the line to send.
        public func committed() async -> [UInt8]? {
            guard let commit else { return line }
            do {
                try await commit()
                return line
            } catch {
                return lineIfCommitFails?(error)
            }
        }
    }

    let core: Jukebox
    /// Who is asking, as shown in `queue` ("who queued them"), unless a request names itself.
    let client: String
    /// The front end the requests come through: what an entry's origin means, which no
    /// request can change.
    let frontEnd: Requester.FrontEnd
    /// What the web remote serves, for `webCA`.
    let webCertificate: WebCertificateBoard
    /// The connection's upload, if any.
    let uploads = UploadSlot()

    public init(
        core: Jukebox, client: String = "client", frontEnd: Requester.FrontEnd = .socket, webCertificate: WebCertificateBoard = WebCertificateBoard()
    ) {
        self.core = core
        self.client = client
        self.frontEnd = frontEnd
        self.webCertificate = webCertificate
    }

    /// Who asks: this front end, under the `client` name a request gives, or its own.
    func requester(_ params: RPCParams) throws(RPCError) -> Requester {
        Requester(frontEnd, name: try params.string("client") ?? client)
    }

    /// The next bytes of the file an `upload` announced.
    public func uploadBytes(_ bytes: [UInt8]) async { await uploads.write(bytes) }

    /// Discards an upload the connection did not finish or add (call when it ends).
    public func connectionEnded() async { await uploads.discard() }

    /// Handles a request and, if it changed state, waits until the change is durable.
    public func handle(_ line: [UInt8]) async -> Reply {
        var reply = await handleDeferringCommit(line)
        reply.line = await reply.committed()
        reply.commit = nil
        return reply
    }

    /// Handles a request but leaves the commit to the caller, so a connection can apply its
    /// next request while earlier ones wait for the disk (all of them then share one write).
    public func handleDeferringCommit(_ line: [UInt8]) async -> Reply {
        guard String(validating: line, as: UTF8.self) != nil else {
            return Reply(line: RPCCoding.error(.parseError("the request is not valid UTF-8"), id: nil))
        }
        let document: JSONValue
        do {
            document = try JSONParser.parse(line)
        } catch {
            return Reply(line: RPCCoding.error(.parseError("the request is not valid JSON: \(error)"), id: nil))
        }
        guard case .object(let request) = document else {
            return Reply(line: RPCCoding.error(.invalidRequest("a request must be a JSON object (batches are not supported)"), id: nil))
        }
        let id: RPCID?
        switch request["id"] {
        case nil: id = nil
        case .number(let number)? where number == number.rounded() && abs(number) < 1e15: id = .number(Int64(number))
        case .string(let text)?: id = .string(text)
        default:
            return Reply(line: RPCCoding.error(.invalidRequest("\"id\" must be a string or a whole number"), id: nil))
        }
        guard request["jsonrpc"] == .string("2.0") else {
            return Reply(line: RPCCoding.error(.invalidRequest("\"jsonrpc\" must be \"2.0\""), id: id))
        }
        guard case .string(let method)? = request["method"] else {
            return Reply(line: RPCCoding.error(.invalidRequest("\"method\" must be a string"), id: id))
        }
        var reply: Reply
        do {
            reply = try await dispatch(method, try RPCParams(request["params"], method: method), id: id)
        } catch {
            reply = Reply(line: RPCCoding.error(error, id: id))
        }
        // A request without an id is a notification: it is carried out but never answered.
        if id == nil {
            reply.line = nil
            reply.lineIfCommitFails = nil
        }
        return reply
    }

    /// An entry's own level and length: `"volume"` 0–100 (held to the session's `maxVolume`)
    /// and `"stopAfter"`, a length such as `10s`, from 0.1 s to 24 h.
    static func playing(_ params: RPCParams) throws(RPCError) -> QueueEntry.Playing {
        let volume = try params.integer("volume", in: Jukebox.volumeRange)
        var stopAfter: Duration?
        // A length (`10s`), or a number of seconds.
        let given: (length: Duration?, text: String)? = switch params.fields["stopAfter"] {
        case nil, .null?: nil
        case .number(let seconds)?: (DurationText.fromSeconds(seconds), JSONValue.number(seconds).shortDescription)
        case .string(let text)?: (DurationText.parse(text), JSONValue.string(text).shortDescription)
        case let other?: (nil, other.shortDescription)
        }
        if let given {
            let range = QueueEntry.Playing.stopAfterRange
            guard let length = given.length, range.contains(length) else {
                throw RPCError.invalidParams("\"stopAfter\" must be a length from \(DurationText.format(range.lowerBound)) to \(DurationText.format(range.upperBound)) (such as 10s, or a number of seconds), not \(given.text)")
            }
            stopAfter = length
        }
        return QueueEntry.Playing(volume: volume.map { Double($0) / Double(Jukebox.volumeRange.upperBound) }, stopAfter: stopAfter)
    }

    /// A length written as `30m`, `1h30m` or `90s`.
    /// A date of the day plans: `YYYY-MM-DD`, or `today` and `tomorrow` where jukeboxd is, for
    /// front ends that do not know its zone.
    func planDate(_ text: String, _ name: String) async throws(RPCError) -> CivilDate {
        switch text {
        case "today": return await core.today
        case "tomorrow": return await core.today.adding(days: 1)
        default: return try Self.date(text, name)
        }
    }

    static func date(_ text: String, _ name: String) throws(RPCError) -> CivilDate {
        guard case .success(.dates(let range)) = DateRule.parse(text, allowHolidays: false), range.lowerBound == range.upperBound else {
            throw RPCError.invalidParams("\"\(name)\" must be a date such as 2026-12-24, not \"\(text.prefix(40))\"")
        }
        return range.lowerBound
    }

    static func duration(_ text: String, _ name: String) throws(RPCError) -> Duration {
        guard case .success(let length) = DurationText.check(text) else {
            throw RPCError.invalidParams("\"\(name)\" must be a length such as 30m, 1h or 1h30m, not \"\(text.prefix(40))\"")
        }
        return length
    }

    private func dispatch(_ method: String, _ params: RPCParams, id: RPCID?) async throws(RPCError) -> Reply {
        func answer(_ result: some Encodable, subscribe: Bool = false) -> Reply {
            Reply(line: RPCCoding.result(result, id: id), subscribe: subscribe)
        }
        /// The answer to a command, sent once the core says it is durable.
        func answer<Value>(_ acknowledged: Acknowledged<Value>, _ result: (Value) -> some Encodable) -> Reply {
            var reply = Reply(line: RPCCoding.result(result(acknowledged.value), id: id))
            if acknowledged.durableMark != nil {
                reply.commit = { [core] () async throws(JukeboxError) in try await core.waitUntilDurable(acknowledged) }
                reply.lineIfCommitFails = { error in RPCCoding.error(RPCError(error), id: id) }
            }
            return reply
        }
        do {
            switch method {
            case "enqueue":
                try params.allow(["clips", "title", "cue", "client", "afterQuiet", "now", "volume", "stopAfter"])
                let (cue, from, afterQuiet) = (try params.bool("cue") ?? false, try requester(params), try params.bool("afterQuiet") ?? false)
                let now = try params.bool("now") ?? false
                let playing = try Self.playing(params)
                let done: Acknowledged<[(entry: QueueEntry, position: Int?)]>
                if let title = try params.string("title") {
                    guard params.fields["clips"] == nil else { throw RPCError.invalidParams("give \"clips\" or \"title\", not both") }
                    done = try await core.enqueue(titled: title, cue: cue, client: from, afterQuiet: afterQuiet, now: now, playing: playing)
                } else {
                    let clips = try params.strings("clips")
                    guard !clips.isEmpty else { throw RPCError.invalidParams("\"clips\" must name at least one clip") }
                    done = try await core.enqueue(clips, cue: cue, client: from, afterQuiet: afterQuiet, now: now, playing: playing)
                }
                return answer(done) { EnqueueResult(entries: $0.map { EntryInfo(accepted: $0.entry, position: $0.position) }) }
            case "say":
                try params.allow(["text", "cue", "client", "afterQuiet", "now"])
                guard let text = try params.string("text") else { throw RPCError.invalidParams("\"text\" must give the text to say") }
                let done = try await core.say(
                    text, cue: try params.bool("cue") ?? false, client: try requester(params),
                    afterQuiet: try params.bool("afterQuiet") ?? false, now: try params.bool("now") ?? false)
                return answer(done) { EnqueueResult(entries: [EntryInfo(accepted: $0.entry, position: $0.position)]) }
            case "playAddress":
                try params.allow(["address", "before", "title", "client", "now"])
                guard let address = try params.string("address") else { throw RPCError.invalidParams("\"address\" must give the http:// or https:// address of the audio") }
                let done = try await core.playAddress(
                    address, before: try params.string("before"), title: try params.string("title"), client: try requester(params),
                    now: try params.bool("now") ?? false)
                return answer(done) { EnqueueResult(entries: [EntryInfo(accepted: $0.entry, position: $0.position)]) }
            case "queue": try params.allow([]); return answer(QueueResult(await core.snapshot()))
            case "status": try params.allow([]); return answer(StatusResult(await core.snapshot()))
            case "skip": try params.allow([]); return answer(await core.skip()) { SkipResult(skipped: $0.map { EntryInfo($0) }) }
            case "remove":
                try params.allow(["tickets"])
                let tickets = try params.integers("tickets")
                guard !tickets.isEmpty else { throw RPCError.invalidParams("\"tickets\" must list at least one ticket") }
                return answer(await core.remove(tickets.map { UInt64($0) })) { RemoveResult(removed: $0.removed, notWaiting: $0.notWaiting) }
            case "clear": try params.allow([]); return answer(await core.clear()) { RemoveResult(removed: $0, notWaiting: []) }
            case "stop":
                try params.allow(["queuedBy"])
                return answer(try await core.stop(queuedBy: try params.string("queuedBy"))) { StopResult(removed: $0.removed, skipped: $0.skipped.map { EntryInfo($0) }) }
            case "pause": try params.allow([]); return answer(await core.pause()) { PauseResult(paused: $0) }
            case "resume": try params.allow([]); return answer(await core.resume()) { PauseResult(paused: $0) }
            case "pick": try params.allow([]); return answer(await core.pick()) { PickResult(entry: $0.map { EntryInfo($0) }) }
            case "clips": try params.allow([]); return answer(ClipsResult(await core.snapshot()))
            case "history":
                try params.allow(["limit"])
                let limit = try params.integer("limit", in: 1...ClipPlayQueue.historyLimit) ?? 20
                return answer(HistoryResult(await core.snapshot(), limit: limit))
            case "volume":
                try params.allow(["level"])
                guard let level = try params.integer("level", in: Jukebox.volumeRange) else {
                    return answer(VolumeResult(await core.snapshot()))
                }
                return answer(try await core.setVolume(level)) { VolumeResult(volume: $0) }
            case "quiet":
                try params.allow(["set", "for"])
                let request: QuietHours.Request
                switch (try params.string("set"), try params.string("for")) {
                case (nil, nil):
                    let now = await core.snapshot()
                    return answer(QuietInfo(now.quiet, held: now.queue.held.count))
                case ("on"?, nil): request = .on
                case ("off"?, nil): request = .off
                case (nil, let length?): request = .for(try Self.duration(length, "for"))
                case (let set?, nil): throw RPCError.invalidParams("\"set\" must be \"on\" or \"off\", not \"\(set.prefix(40))\"")
                case (_?, _?): throw RPCError.invalidParams("give \"set\" or \"for\", not both")
                }
                let done = try await core.setQuiet(request)
                let held = await core.snapshot().queue.held.count
                return answer(done) { QuietInfo($0, held: held) }
            case "test":
                try params.allow(["device"])
                let test = try await core.soundTest(device: try params.string("device"))
                return answer(SoundTestResult(
                    device: test.device, format: "\(test.format)", deviceFormat: test.deviceFormat.map { "\($0)" }, seconds: test.seconds,
                    took: (test.took * 1000).rounded() / 1000, realTime: test.realTime))
            case "health":
                try params.allow([])
                let health = await core.health()
                return answer(HealthResult(healthy: health.isHealthy, problem: health.problem, alert: health.alert))
            case "bed":
                try params.allow(["set"])
                switch try params.string("set") {
                case nil:
                    guard let bed = await core.snapshot().player.bed else { throw Jukebox.noBed }
                    return answer(BedInfo(bed))
                case "on"?: return answer(try await core.setMusic(on: true)) { BedInfo($0) }
                case "off"?: return answer(try await core.setMusic(on: false)) { BedInfo($0) }
                case let set?: throw RPCError.invalidParams("\"set\" must be \"on\" or \"off\", not \"\(set.prefix(40))\"")
                }
            case "next":
                try params.allow(["limit"])
                let plan = await core.plan(limit: try params.integer("limit", in: Jukebox.planLimitRange) ?? 10)
                return answer(NextResult(plan, held: await core.snapshot().queue.held.count))
            case "plan":
                try params.allow(["from", "days"])
                var from: CivilDate?
                if let text = try params.string("from") { from = try await planDate(text, "from") }
                let days = try await core.planDays(from: from, count: try params.integer("days", in: Jukebox.planDaysRange) ?? 14)
                return answer(PlanResult(days: days.map(PlanDay.init)))
            case "setPlan":
                try params.allow(["date", "plan", "client"])
                guard let text = try params.string("date") else { throw RPCError.invalidParams("\"date\" is missing: the date to set, as YYYY-MM-DD") }
                let date = try await planDate(text, "date")
                let plan = try params.string("plan")
                let done = try await core.setPlan(plan, on: date, by: requester(params).name)
                return answer(done) { PlanDay($0) }
            case "alert":
                try params.allow(["start", "end", "client"])
                let names = await core.alertNames
                switch (try params.string("start"), try params.bool("end")) {
                case (nil, nil), (nil, false?):
                    return answer(AlertResult(alert: await core.alertOn.map(AlertInfo.init), alerts: names))
                case (let name?, nil), (let name?, false?):
                    let was = await core.alertOn
                    return answer(try await core.startAlert(name, client: try requester(params))) { run in
                        AlertResult(alert: AlertInfo(run), ended: was.map(AlertInfo.init), alerts: names)
                    }
                case (nil, true?):
                    return answer(try await core.endAlert(client: try requester(params))) { ended in
                        AlertResult(alert: nil, ended: ended.map(AlertInfo.init), alerts: names)
                    }
                case (_?, true?): throw RPCError.invalidParams("give \"start\" (an alert's name) or \"end\": true, not both")
                }
            case "reload": try params.allow([]); return answer(try await core.reload()) { ReloadResult(session: $0.session, clips: $0.clips) }
            case "loudness":
                try params.allow([])
                let report = await core.loudnessReport()
                func rounded(_ value: Double?) -> Double? { value.map { ($0 * 10).rounded() / 10 } }
                return answer(LoudnessResult(target: report.target, clips: report.clips.map { entry in
                    LoudnessResult.Figure(
                        clip: entry.clip.id, file: entry.clip.source.file, integrated: rounded(entry.loudness?.integrated),
                        truePeak: rounded(entry.loudness?.truePeak), gain: rounded(entry.gain), measured: entry.loudness != nil)
                }))
            case "webCA":
                try params.allow([])
                switch webCertificate.current {
                case .authority(let result): return answer(result)
                case .off: throw RPCError(code: -32012, message: "the web remote is off: give the session an http section (see docs/web.md)", data: .init(reason: "no-web-ca"))
                case .plainHTTP: throw RPCError(code: -32012, message: "the web remote serves plain HTTP (the session's http.https is false), so it has no certificate authority", data: .init(reason: "no-web-ca"))
                case .ownCertificate(let path, let notAfter, let ended):
                    let end = CivilDate(daysSinceEpoch: Int((notAfter / 86400).rounded(.down)))
                    let validity = ended ? "which ended on \(end): browsers refuse it; put a renewed one there" : "valid until \(end)"
                    throw RPCError(code: -32012, message: "the web remote serves your own certificate, \(path), \(validity); phones trust whoever issued it", data: .init(reason: "no-web-ca"))
                }
            case "subscribe": try params.allow([]); return answer(SubscribeResult(subscribed: true), subscribe: true)
            case "session":
                try params.allow([])
                let (document, session) = try await core.sessionDocument()
                return answer(SessionResult(document: document, session: session))
            case "addClip":
                try params.allow(Clip.fields + ["ifRevision", "upload"])
                let ifRevision = try params.string("ifRevision")
                if let id = try params.string("upload") {
                    if params.fields["file"] != nil { throw RPCError.invalidParams("give \"file\" or \"upload\", not both") }
                    let upload = try await uploads.take(id)
                    return answer(try await core.addClip(upload: upload, fields: params.fields(Clip.fields), ifRevision: ifRevision), EditResult.init)
                }
                return answer(try await core.edit(.addClip(params.fields(Clip.fields)), ifRevision: ifRevision), EditResult.init)
            case "upload":
                try params.allow(["name", "size"])
                let name = try params.requiredString("name")
                guard let size = try params.integer("size", in: 1...Int(Int32.max)) else { throw RPCError.invalidParams("upload needs \"size\", the file's size in bytes") }
                let (id, accepted) = try await uploads.begin { () throws(JukeboxError) -> ClipUpload in try await core.beginUpload(name: name, size: size) }
                var reply = answer(UploadResult(upload: id, size: accepted))
                reply.rawBytes = accepted
                return reply
            case "updateClip":
                try params.allow(Clip.fields + ["ifRevision"])
                let edit = SessionEdit.updateClip(id: try params.requiredString("id"), params.fields(Clip.fields.filter { $0 != "id" }))
                return answer(try await core.edit(edit, ifRevision: try params.string("ifRevision")), EditResult.init)
            case "removeClip":
                try params.allow(["id", "deleteFile", "ifRevision"])
                let edit = SessionEdit.removeClip(id: try params.requiredString("id"), deleteFile: try params.bool("deleteFile") ?? false)
                return answer(try await core.edit(edit, ifRevision: try params.string("ifRevision")), EditResult.init)
            case "updateSchedule":
                try params.allow(SessionEdit.scheduleFields + ["ifRevision"])
                let fields = params.fields(SessionEdit.scheduleFields)
                guard !fields.isEmpty else { throw RPCError.invalidParams("updateSchedule needs at least one field to change") }
                return answer(try await core.edit(.updateSchedule(fields), ifRevision: try params.string("ifRevision")), EditResult.init)
            default: throw RPCError.methodNotFound(method)
            }
        } catch let error as RPCError {
            throw error
        } catch let error as JukeboxError {
            throw RPCError(error)
        } catch {
            // Neither can be thrown here; a request still never goes unanswered.
            throw RPCError.invalidRequest("\(error)")
        }
    }
}

extension RPCDispatcher {
    /// A refusal, in the dispatcher's words.
    public struct Refusal: Error, Sendable, Equatable {
        public var message: String
        public init(message: String) { self.message = message }
    }

    /// A request made by a front end that speaks another protocol (MQTT, ESPHome's API): the
    /// same dispatch, checks and durability as a JSON-RPC client's. Returns the result once
    /// the change is on disk, or the refusal's message.
    public func call(_ method: String, _ params: [String: JSONValue]) async -> Result<JSONValue, Refusal> {
        let line = JSONValue.object(["jsonrpc": .string("2.0"), "id": .number(1), "method": .string(method), "params": .object(params)]).text
        let reply = await handle(Array(line.utf8))
        guard let answer = reply.line, case .object(let fields)? = try? JSONParser.parse(answer) else {
            return .failure(Refusal(message: "no answer"))
        }
        if case .object(let error)? = fields["error"] {
            if case .string(let message)? = error["message"] { return .failure(Refusal(message: message)) }
            return .failure(Refusal(message: "refused"))
        }
        return .success(fields["result"] ?? .null)
    }
}
