/// What stops the daemon from starting (a state folder it may not use, a port in use, a
/// certificate that cannot be served, a socket taken): said in words, and exited with its
/// sysexits status.
public protocol StartFailure: Error, CustomStringConvertible {
    var exitCode: Int32 { get }
}

extension StateLocationError: StartFailure {}
