import JukeboxCore

/// A connection's upload: at most one at a time, from the `upload` request that announces it,
/// through its bytes, to the `addClip` that stores it. Whatever is left when the connection
/// ends is discarded, so an abandoned or cut-off upload leaves no file.
actor UploadSlot {
    private var current: (id: String, upload: ClipUpload)?
    /// Why the bytes could not be stored; reported by the `addClip` that names the upload.
    private var failure: JukeboxError?
    private var count = 0

    /// Starts an upload; refused while another is under way on this connection.
    func begin(_ start: () async throws(JukeboxError) -> ClipUpload) async throws(JukeboxError) -> (id: String, size: Int) {
        if let current {
            throw .invalidParameter("one upload at a time per connection: add \(current.id) with addClip first (or close the connection to abandon it)")
        }
        let upload = try await start()
        count += 1
        let id = "u\(count)"
        current = (id, upload)
        failure = nil
        return (id, upload.size)
    }

    /// The next bytes of the upload. Once storing fails, the rest are read and dropped.
    func write(_ bytes: [UInt8]) async {
        guard let upload = current?.upload, failure == nil else { return }
        do {
            try await upload.write(bytes)
        } catch {
            failure = error
            await upload.discard()
        }
    }

    /// The upload `id`, for `addClip`; it leaves the slot.
    func take(_ id: String) async throws(JukeboxError) -> ClipUpload {
        guard let current, current.id == id else {
            throw .invalidParameter("no upload \"\(id)\" on this connection (send `upload` first, then its bytes, on the same connection)")
        }
        self.current = nil
        if let failure {
            self.failure = nil
            throw failure
        }
        return current.upload
    }

    func discard() async {
        if let upload = current?.upload { await upload.discard() }
        current = nil
    }
}
