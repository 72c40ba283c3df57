// The audio layer's errors and files speak of paths and users: whoever builds on it (an
// output, a decoder, the core) sees the file helpers too.
@_exported import JukeboxFiles
