import CJukeboxBuild

/// jukeboxd's version, as `jukeboxd --version` and `jukebox --version` print it and as the
/// Debian package (scripts/package.sh) is numbered.
public enum JukeboxVersion {
    /// The version this source is: a release's tag and the changelog's first entry say the same
    /// (scripts/release-check.sh).
    public static let source = "0.1.0"
    /// What the programs say they are: `source`, or the version the build was given
    /// (`JUKEBOX_VERSION`, see Package.swift).
    public static let current: String = jukebox_build_version().map { String(cString: $0) } ?? source
}
