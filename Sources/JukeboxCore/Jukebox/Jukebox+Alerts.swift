import Logging

// Alerts: started and ended by any front end, latched in the state file, sounded by the queue.
extension Jukebox {
    /// The word that ends an alert (`jukebox alert off`), which no alert may be named.
    public static let alertOff = "off"

    /// Starts the session's alert `name`: it is on, and saved, before this is acknowledged;
    /// the clip playing now is cut where it is heard, and an alert that was on is replaced.
    public func startAlert(_ name: String, client: Requester) async throws(JukeboxError) -> Acknowledged<ClipPlayQueue.AlertRun> {
        try Self.checkClient(client.name)
        let session = catalog.session
        guard let settings = session.alert(named: name) else {
            let names = alertNames
            let shown = String(name.prefix(60))
            throw .invalidParameter(names.isEmpty
                ? "the session has no alerts: add an \"alerts\" section, such as {\"lockdown\": {\"clip\": \"lockdown\", \"every\": \"30s\"}} (see docs/alerts.md)"
                : "\"\(shown)\" is not an alert of this session (its alerts: \(names.joined(separator: ", ")))")
        }
        let run = try alertRun(settings, by: client, since: configuration.time.wallClock())
        if case .say(let text) = settings.sound { await speech?.prepare(text) }
        let replaced = await queue.startAlert(run)
        let was = replaced.map { " in place of the \($0.name) alert" } ?? ""
        logger.notice("the \(name) alert was started by \(client.name)\(was); it sounds until it is ended", metadata: ["alert": "\(name)", "client": "\(client.name)"])
        events.publish(.alert(run))
        return await acknowledge(run, .alert)
    }

    /// Ends the alert that is on: its `end` clip plays once, then what waited, in order.
    /// Returns the alert ended; nil when none was on.
    public func endAlert(client: Requester) async throws(JukeboxError) -> Acknowledged<ClipPlayQueue.AlertRun?> {
        try Self.checkClient(client.name)
        let ended = await queue.endAlert(by: client)
        if ended != nil {
            events.publish(.alert(nil))
            // Ended between two soundings with nothing to follow: the other players go back
            // up now. (A sounding cut short says so itself, as any clip does at its end.)
            if await queue.nothingSounds {
                async let others: Void = ducker.clipEnded(anotherWaits: false)
                async let bed: Void = bedDucker.clipEnded(anotherWaits: false)
                _ = await (others, bed)
            }
        }
        return await acknowledge(ended, .alert)
    }

    /// The session's alerts' names, in its order.
    public var alertNames: [String] { catalog.session.alerts.map(\.name) }

    /// The alert that is on, if any.
    public var alertOn: ClipPlayQueue.AlertRun? {
        get async { await queue.alert }
    }

    /// An alert as the queue sounds it: its clips as they are now.
    func alertRun(_ settings: AlertSettings, by: Requester, since: Double) throws(JukeboxError) -> ClipPlayQueue.AlertRun {
        let session = catalog.session
        let sound: PlayableClip
        switch settings.sound {
        case .clip(let id):
            guard let clip = session.clip(id: id) else { throw .unknownClip(id, suggestions: []) }
            sound = Self.alertClip(clip)
        case .say(let text):
            guard speech != nil else {
                throw .invalidParameter("the \(settings.name) alert speaks, and announcements are off: this jukeboxd keeps no state, so it has nowhere to keep their audio")
            }
            sound = .spoken(text)
        }
        let end = settings.end.flatMap { session.clip(id: $0) }.map(Self.alertClip)
        return ClipPlayQueue.AlertRun(settings: settings, sound: sound, endClip: end, by: by, since: since)
    }

    /// An alert's clip lowers the other players whatever the clip's own `duck` says.
    static func alertClip(_ clip: Clip) -> PlayableClip {
        var playable = PlayableClip(clip)
        playable.ducks = true
        return playable
    }

    /// Puts back the alert that was on when the daemon stopped: it sounds first, before
    /// anything else.
    func restoreAlert(_ saved: PersistedState.SavedAlert) async {
        let session = catalog.session
        let by = Requester.saved(name: saved.client, via: saved.via)
        guard let settings = session.alert(named: saved.name), let run = try? alertRun(settings, by: by, since: saved.since) else {
            logger.warning("the \(saved.name) alert was on when jukeboxd stopped, but the session has no such alert now; it is ended", metadata: ["alert": "\(saved.name)"])
            return
        }
        if case .say(let text) = settings.sound { await speech?.prepare(text) }
        await queue.startAlert(run)
        logger.notice("the \(saved.name) alert was on when jukeboxd stopped (started by \(saved.client)); it sounds again", metadata: ["alert": "\(saved.name)"])
        events.publish(.alert(run))
    }
}
