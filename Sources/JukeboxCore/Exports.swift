// The core's API speaks the audio layer's types (formats, sinks, device errors, decoders),
// so whoever imports the core sees them too.
@_exported import JukeboxAudio
