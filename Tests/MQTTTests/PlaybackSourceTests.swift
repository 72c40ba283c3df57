import JukeboxCore
@testable import JukeboxMQTT
import Testing

/// Where a play came from is the front end it came through: a name a request gives itself
/// is shown, and changes nothing.
@Suite("Playback events: where a play came from")
struct PlaybackSourceTests {
    func entry(_ origin: QueueEntry.Origin) -> QueueEntry {
        QueueEntry(ticket: 1, clip: PlayableClip(id: "bell", source: ClipSource(file: "bell.wav", path: "/clips/bell.wav")), origin: origin)
    }

    @Test func theSourceIsTheFrontEndsWhateverNameARequestGivesItself() {
        #expect(PlaybackEvents.source(entry(.client(Requester(.web, name: "siren")))) == "web")
        #expect(PlaybackEvents.source(entry(.client(Requester(.siren, name: "siren")))) == "siren")
        #expect(PlaybackEvents.source(entry(.client(Requester(.socket, name: "mqtt")))) == "cli")
        #expect(PlaybackEvents.source(entry(.client(Requester(.mqtt, name: "kitchen")))) == "mqtt")
        #expect(PlaybackEvents.source(entry(.scheduler)) == "scheduler")
        // A fixed time has one word, in MQTT's events and in `queue` and the history alike.
        #expect(PlaybackEvents.source(entry(.fixedTime(1_000))) == "fixed-time")
        #expect(entry(.fixedTime(1_000)).origin.description == "fixed-time")
        // The name is what is shown.
        #expect(entry(.client(Requester(.web, name: "kitchen tablet"))).origin.description == "kitchen tablet")
    }
}
