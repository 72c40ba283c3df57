import ESPHomeAPI
import JukeboxCore

/// The media player as Home Assistant sees it, from the core's snapshot: the one entity, its
/// features and formats, and its state.
enum MediaPlayerView {
    /// The entity's key: any fixed number, the same at every start (Home Assistant keys its
    /// state on it).
    static let key: UInt32 = 0x6A75_6B65
    static let objectID = "media_player"

    /// Pause, volume (set and mute), play media, stop, play, and announcements
    /// (`MediaPlayerEntityFeature` as Home Assistant numbers them).
    static let features: UInt32 = 1 << 0 | 1 << 2 | 1 << 3 | 1 << 9 | 1 << 12 | 1 << 14 | 1 << 20

    /// What Home Assistant's media proxy converts to before it hands an address over: FLAC,
    /// lossless and small, at 48 kHz stereo, for music and announcements alike.
    static let formats: [ESPMediaPlayerSupportedFormat] = [ESPMediaPlayerFormatPurpose.default, .announcement].map { purpose in
        var format = ESPMediaPlayerSupportedFormat()
        format.format = "flac"
        format.sampleRate = 48_000
        format.numChannels = 2
        format.purpose = purpose
        return format
    }

    static func entity() -> ESPListEntitiesMediaPlayerResponse {
        var entity = ESPListEntitiesMediaPlayerResponse()
        entity.objectID = objectID
        entity.key = key
        // Empty: Home Assistant names the entity after the device.
        entity.name = ""
        entity.icon = "mdi:speaker"
        entity.supportsPause = true
        entity.supportedFormats = formats
        entity.featureFlags = features
        return entity
    }

    /// The state pushed to Home Assistant.
    struct State: Equatable {
        var state: ESPMediaPlayerState
        var volume: Float
        var muted: Bool

        init(_ snapshot: JukeboxSnapshot) {
            if snapshot.queue.paused {
                state = .paused
            } else if let current = snapshot.queue.current {
                // An urgent entry (an announcement, `play --now`, an alert) cuts in.
                state = current.urgent ? .announcing : .playing
            } else {
                state = .idle
            }
            volume = Float(snapshot.volume) / Float(Jukebox.volumeRange.upperBound)
            muted = snapshot.volume == 0
        }

        var message: ESPMediaPlayerStateResponse {
            var message = ESPMediaPlayerStateResponse()
            message.key = MediaPlayerView.key
            message.state = state
            message.volume = volume
            message.muted = muted
            return message
        }
    }
}
