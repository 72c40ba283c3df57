/// jukeboxd's version, as `jukeboxd --version` and `jukebox --version` print it and as the
/// Debian package (scripts/package.sh) is numbered.
public enum JukeboxVersion {
    public static let current = "0.1.0"
}
