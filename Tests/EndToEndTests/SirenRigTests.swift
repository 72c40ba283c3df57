import Foundation
import JukeboxTestSupport
import Testing

/// Home Assistant's siren on the paced rig, with a real mosquitto: `siren.turn_on` as Home
/// Assistant publishes it is heard at its `volume_level` and ends at its `duration`, and
/// `siren.turn_off` ends the clip it started.
extension RealTimeTests {
    @Test(.enabled(if: Mosquitto.isInstalled, Comment(rawValue: Mosquitto.missing)))
    func theSirenIsHeardAtItsLevelForItsDurationAndTurnedOff() async throws {
        let mosquitto = try Mosquitto()
        // c0: 3 s at 500 Hz; c1: 1 s at 800 Hz.
        let arguments = try session(clips: [3, 1], extra: #", "mqtt": { "broker": "mqtt://127.0.0.1:\#(mosquitto.port)", "topic": "jukeboxd/hall" }"#)
        let (command, state) = ("jukeboxd/hall/command/siren", "jukeboxd/hall/siren")
        try await mosquitto.run { _ in
            try await rig.with {
                try await rig.startCapture()
                let run = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening", environment: rig.environment) { log in
                    #expect(await log.waitFor("MQTT connected"))
                    #expect(try await mosquitto.messages(state) == ["OFF"])
                    // Half the level, for one second of the three.
                    try await mosquitto.publish(command, #"{"state": "ON", "tone": "c0", "duration": 1, "volume_level": 0.5}"#)
                    #expect(try await mosquitto.messages(state, until: "ON").last == "ON")
                    #expect(await log.waitFor("played c0"))
                    #expect(try await mosquitto.messages(state, until: "OFF").last == "OFF")
                    // The other clip whole, at the volume, to measure the first against.
                    expectSuccess(try await jukebox("play", "c1"))
                    #expect(await log.waitFor("played c1"))
                    // On without a duration, then off while it plays.
                    try await mosquitto.publish(command, #"{"state": "ON", "tone": "c0"}"#)
                    #expect(try await mosquitto.messages(state, until: "ON").last == "ON")
                    #expect(await played(0.5))
                    try await mosquitto.publish(command, #"{"state": "OFF"}"#)
                    #expect(await log.waitFor("skipped c0"))
                    #expect(try await mosquitto.messages(state, until: "OFF").last == "OFF")
                    #expect(await log.waitFor("pulse drained"))
                }
                try await rig.stopCapture()
                #expect(run.status == 0)
            }
        }
        let bytes = try folder.read("capture.raw")
        let segments = CaptureAnalysis(bytes: bytes, frequencies: Self.tones).segments
        #expect(segments.map(\.frequency) == [500, 800, 500], "\(segments)")
        guard segments.count == 3 else { return }
        #expect((98...101).contains(segments[0].windows), "one second of the siren's clip, of three: \(segments)")
        #expect((99...101).contains(segments[1].windows), "\(segments)")
        #expect((40...250).contains(segments[2].windows), "turned off after half a second or more, before its end: \(segments)")
        // The level, in 10 ms windows inside each segment (clear of the fades).
        func level(_ segment: CaptureAnalysis.Segment) -> Double {
            let amplitudes = CaptureAnalysis.amplitudes(bytes: bytes, frequency: segment.frequency, frames: CaptureAnalysis.rate / 100)
            let inside = amplitudes[(segment.start + 5)..<(segment.end - 5)].sorted()
            return inside[inside.count / 2]
        }
        let decibels = 20 * log10(level(segments[0]) / level(segments[1]))
        print("real-time rig: the siren's volume_level 0.5 was heard \(String(format: "%.2f", decibels)) dB from the volume")
        #expect(abs(decibels - 20 * log10(0.5)) < 0.5, "volume_level 0.5 is 6 dB down: \(decibels) dB")
    }
}
