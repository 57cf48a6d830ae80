/// Gap, duplicate and out-of-order detection per instrument, for venues that number their messages.
///
/// Steady state: a number not above the last one taken is dropped (a duplicate when equal, out of order when
/// lower); a consecutive numbering that jumps by more than one is a gap, counted and taken. After a reconnect the
/// first number per instrument only sets the baseline (trades missed while disconnected are no gap of the new
/// connection), except that a repeat of the last number is still a duplicate. A venue that renumbers (a run of
/// `renumberAfter` lower numbers in a row) is followed rather than ignored forever.
struct SequenceTracker {
    enum Verdict: Equatable {
        case taken
        /// Taken, after `missed` numbers that never arrived.
        case gap(missed: UInt64)
        case duplicate
        case outOfOrder
    }

    static let renumberAfter = 32

    private var last: [String: UInt64] = [:]
    /// Instruments whose next number is a baseline.
    private var resync: Set<String> = []
    private var lowRun: [String: Int] = [:]

    mutating func check(_ instrument: String, _ number: UInt64, consecutive: Bool) -> Verdict {
        guard let previous = last[instrument] else {
            last[instrument] = number
            return .taken
        }
        if number == previous { return .duplicate }
        if resync.remove(instrument) != nil {
            last[instrument] = number
            return .taken
        }
        if number < previous {
            let run = (lowRun[instrument] ?? 0) + 1
            if run >= Self.renumberAfter {
                lowRun[instrument] = nil
                last[instrument] = number
                return .taken
            }
            lowRun[instrument] = run
            return .outOfOrder
        }
        lowRun[instrument] = nil
        last[instrument] = number
        if consecutive && number - previous > 1 {
            return .gap(missed: number - previous - 1)
        }
        return .taken
    }

    /// A venue's statement that `lastNumber` was sent: numbers between the last one taken and it never arrived.
    mutating func mark(_ instrument: String, lastNumber: UInt64) -> UInt64 {
        guard let previous = last[instrument], !resync.contains(instrument), lastNumber > previous else { return 0 }
        last[instrument] = lastNumber
        return lastNumber - previous
    }

    /// A new connection: every instrument's next number is a baseline.
    mutating func reconnected() {
        resync = Set(last.keys)
        lowRun = [:]
    }
}
