// The core's API speaks the audio layer's types (formats, sinks, device errors, decoders),
// so whoever imports the core sees them too.
@_exported import JukeboxAudio
// Session files and edits are JSON values, parsed by the parser the client shares.
@_exported import enum JukeboxProtocol.JSONValue
@_exported import struct JukeboxProtocol.JSONParser
@_exported import func JukeboxProtocol.editDistance
// The duck policy's players (`DuckTarget`) are the leaf target's, which the players' own
// module builds on without the core.
@_exported import JukeboxDuckTarget
