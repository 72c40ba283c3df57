/// Builds the connection to one of the session's players (the daemon's speaks MPD's protocol
/// and snapserver's JSON-RPC; tests pass their own).
public typealias DuckTargetFactory = @Sendable (DuckSettings.Player) -> any DuckTarget
