/// The open streams of one HTTP/2 connection by id, with the stream last looked up kept at hand.
///
/// nghttp2 reports a request piece by piece (a callback per header field, then the frame, its DATA, the end), and
/// the answer goes out the same way, each step looking its stream up by id. Those steps mostly follow one another
/// for the same stream, and a dictionary lookup hashes the id every time (a full hash per lookup: about 5% of the
/// server's time on small gRPC calls before this table). Loop-confined, like its connection.
struct HTTP2StreamTable {
    private var byID: [Int32: HTTP2Stream] = [:]
    /// The stream of the last lookup or insertion; always one that `byID` holds.
    private var last: HTTP2Stream?

    subscript(id: Int32) -> HTTP2Stream? {
        mutating get {
            if let last, last.id == id { return last }
            let found = byID[id]
            if found != nil { last = found }
            return found
        }
        set {
            byID[id] = newValue
            if let newValue {
                last = newValue
            } else if last?.id == id {
                last = nil
            }
        }
    }

    /// Removes and returns the stream `id`.
    mutating func removeValue(forKey id: Int32) -> HTTP2Stream? {
        if last?.id == id { last = nil }
        return byID.removeValue(forKey: id)
    }

    mutating func removeAll() {
        byID = [:]
        last = nil
    }

    var values: Dictionary<Int32, HTTP2Stream>.Values { byID.values }

    var isEmpty: Bool { byID.isEmpty }
}
