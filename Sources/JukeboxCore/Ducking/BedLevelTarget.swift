/// The music bed's gain as a thing the duck policy lowers, as it lowers MPD or a snapclient:
/// the player keeps the level and hands it to whichever bed plays (a reload's new one too).
/// No one else sets it, so a ramp's steps are never found changed.
struct BedLevelTarget: DuckTarget {
    let player: Player

    func read() async throws -> DuckTargetState { DuckTargetState(volume: await player.bedLevel, playing: true) }
    func setVolume(_ percent: Int) async throws { await player.setBedLevel(percent) }
    /// The bed is only ever lowered.
    func setPaused(_ paused: Bool) async throws {}
}
