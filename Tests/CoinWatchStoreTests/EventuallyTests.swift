import CoinWatchTestSupport
import Testing

/// `eventually` has no test target of its own (see TemporaryDirectoryTests); its counting is checked here on a
/// made-up clock, so that what it does on a starved machine is shown without starving one.
@Suite("eventually's patience")
struct EventuallyTests {
    /// A clock that only moves when told: sleeps and conditions advance it by what the test says they took.
    final class FakeTime {
        var now: Duration = .zero
        var polls = 0
    }

    static let patience = Patience(timeout: .seconds(1), interval: .milliseconds(2))

    @Test("sleeps that overran because no thread was free are not counted: the condition gets its polls")
    func starvedSleepsAreNotCounted() async {
        let time = FakeTime()
        // Each 2 ms sleep takes 400 ms: a wall-clock deadline of 1 s would give up after the third poll.
        let held = await Self.patience.wait(
            until: { time.polls += 1; return time.polls == 10 },
            elapsed: { time.now }, sleep: { _ in time.now += .milliseconds(400) })
        #expect(held)
        #expect(time.polls == 10)
    }

    @Test("however starved, the wait ends after five times its timeout of wall-clock time")
    func hardBound() async {
        let time = FakeTime()
        let held = await Self.patience.wait(
            until: { time.polls += 1; return false },
            elapsed: { time.now }, sleep: { _ in time.now += .seconds(1) })
        #expect(!held)
        #expect(time.now >= .seconds(5) && time.now <= .seconds(6), "ended at \(time.now)")
    }

    @Test("on an idle machine the timeout is wall-clock time, and a slow condition's own time counts")
    func idleAndSlowConditions() async {
        let idle = FakeTime()
        #expect(!(await Self.patience.wait(
            until: { idle.polls += 1; return false },
            elapsed: { idle.now }, sleep: { idle.now += $0 })))
        #expect(idle.now >= .seconds(1) && idle.now < .milliseconds(1_010), "ended at \(idle.now)")

        let slow = FakeTime()
        #expect(!(await Self.patience.wait(
            until: { slow.polls += 1; slow.now += .milliseconds(300); return false },
            elapsed: { slow.now }, sleep: { slow.now += $0 })))
        // Four polls of 300 ms reach the 1 s timeout; the last answer is asked once more.
        #expect(slow.polls == 5, "\(slow.polls) polls")
    }
}
