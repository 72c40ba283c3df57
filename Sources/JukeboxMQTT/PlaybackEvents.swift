import JukeboxCore
import JukeboxProtocol

/// Home Assistant's Playback event entity: each play that starts or ends, as one message on
/// `TOPIC/playback` (not retained: Home Assistant fires the event once per message), with
/// `event_type` and the play's attributes.
enum PlaybackEvents {
    /// The event types, as discovery lists them.
    static let types = ["started", "finished", "failed", "skipped", "missed", "announced", "held-back", "alert-started", "alert-ended"]

    /// The event a play that ended is told as.
    static func type(_ outcome: PlayOutcome, announcement: Bool) -> String {
        switch outcome {
        case .completed: announcement ? "announced" : "finished"
        case .stopped, .notPlayed: "skipped"
        case .failed, .endedEarly: "failed"
        case .missed: "missed"
        case .heldBack: "held-back"
        case .alert: "alert-ended"
        }
    }

    /// Who asked for it: `scheduler`, `fixed-time`, `say` (an announcement), `web`, `mqtt`,
    /// `siren`, `home-assistant` (its media player), or `cli` (the socket, under any other
    /// client name).
    static func source(_ entry: QueueEntry) -> String {
        if entry.clip.speech != nil { return "say" }
        switch entry.origin {
        case .scheduler: return "scheduler"
        case .fixedTime: return "fixed-time"
        case .client(let requester):
            return switch requester.frontEnd {
            case .web: "web"
            case .mqtt: "mqtt"
            case .siren: "siren"
            case .esphome: "home-assistant"
            case .socket, .soundTest: "cli"
            }
        }
    }

    /// The message for a play that ended.
    static func ended(_ play: PlayRecord) -> String {
        var fields = attributes(play.entry)
        fields["event_type"] = .string(type(play.outcome, announcement: play.entry.clip.speech != nil))
        // The log's words; a skip by hand has none of its own.
        switch play.outcome {
        case .stopped: fields["reason"] = .string("stopped before its end (skipped, cut off, or jukeboxd stopping)")
        default: if let reason = play.outcome.reason { fields["reason"] = .string(reason) }
        }
        // Numbers the plays across restarts, for an automation that must never act twice.
        fields["play"] = .number(Double(play.seq))
        return JSONValue.object(fields).text
    }

    /// The message for a play that started.
    static func started(_ entry: QueueEntry) -> String {
        var fields = attributes(entry)
        fields["event_type"] = .string("started")
        return JSONValue.object(fields).text
    }

    /// The message for an alert that started (`alert-started`): its name, who started it, and
    /// its sound's clip.
    static func alertStarted(_ run: ClipPlayQueue.AlertRun) -> String {
        var fields = attributes(run.entry(run.sound, ticket: 0))
        fields["ticket"] = nil
        fields["event_type"] = .string("alert-started")
        return JSONValue.object(fields).text
    }

    /// What every event of an entry carries: the clip's id and title, the ticket, who asked
    /// for it (and the client's own name), and a fixed time's moment.
    static func attributes(_ entry: QueueEntry) -> [String: JSONValue] {
        var fields: [String: JSONValue] = [
            "clip": .string(entry.clip.id), "title": .string(entry.clip.title), "ticket": .number(Double(entry.ticket)),
            "source": .string(source(entry)),
        ]
        if let alert = entry.alert { fields["alert"] = .string(alert) }
        switch entry.origin {
        case .client(let requester): fields["client"] = .string(requester.name)
        case .fixedTime(let moment): fields["time"] = .string(StatePublisher.timestamp(Double(moment)))
        case .scheduler: break
        }
        return fields
    }
}
