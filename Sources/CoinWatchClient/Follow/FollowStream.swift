import CoinWatchRPC

/// A server stream that reopens itself: the elements of each stream opened, and the follow's state changes.
///
/// Each attempt connects (to the server that answered last, then the others configured, in order), starts the call
/// on that connection (so the stream is on the server `.connected` names), and yields its elements. When the stream
/// is lost (an error in `FollowOptions.retryable`, or the server ending it), the follow pauses
/// (`FollowOptions.backoff`, growing until a stream delivers an element again) and tries again, starting with the
/// next configured server. Any other error ends it with `.ended(error)`;
/// cancelling the iterating task, or leaving the loop, ends it and cancels the current call on the server. A
/// cancellation that comes while a connection attempt is under way takes effect when the attempt is over (at most
/// `Configuration.connectTimeout` a server); while reading or pausing, at once.
///
/// The work is done as the reader asks for the next event, so nothing runs ahead of a slow reader: elements wait
/// in the current stream's buffer (`FollowOptions.bufferLimit`), and state events are never dropped. Each iteration
/// is a follow of its own, with its own calls.
public struct FollowStream<Item: Sendable>: AsyncSequence, Sendable {
    public typealias Element = FollowEvent<Item>
    public typealias Failure = Never

    let client: CoinWatchClient
    let options: FollowOptions
    /// Starts the call on the connection the follow just made, so that the stream is on the server it reports.
    let open: @Sendable (RPCClientConnection) -> RPCResponseStream<Item>

    public func makeAsyncIterator() -> Iterator {
        Iterator(client: client, options: options, open: open)
    }
}
