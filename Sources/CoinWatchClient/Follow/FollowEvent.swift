/// What a followed stream yields: its elements, and each change of its state in between.
///
/// A `.state(.connected(…))` event opens a new stream: the elements after it came on that stream, until the next
/// `.connected`. A price stream numbers its updates from 1 again on each new stream, so a consumer that checks
/// sequence numbers starts again at `.connected` (a restart); a jump within one stream is a gap.
public enum FollowEvent<Element: Sendable>: Sendable {
    /// The follow changed state.
    case state(FollowState)
    /// An element of the current stream.
    case element(Element)
}
