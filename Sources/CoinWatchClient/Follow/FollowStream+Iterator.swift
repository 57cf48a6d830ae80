import CoinWatchRPC

extension FollowStream {
    /// Steps through connect → read → pause → connect …, one event per `next()`.
    public struct Iterator: AsyncIteratorProtocol {
        private enum Step {
            case start
            case connect
            case read(RPCResponseStream<Item>.Iterator, server: Int)
            case pause(until: ContinuousClock.Instant)
            case done
        }

        private let client: CoinWatchClient
        private let options: FollowOptions
        private let open: @Sendable (RPCClientConnection) -> RPCResponseStream<Item>
        private var step = Step.start
        /// Pauses since the last stream that delivered an element.
        private var attempt = 0
        private var streams = 0
        private var received = false

        init(
            client: CoinWatchClient, options: FollowOptions, open: @escaping @Sendable (RPCClientConnection) -> RPCResponseStream<Item>
        ) {
            self.client = client
            self.options = options
            self.open = open
        }

        public mutating func next() async -> FollowEvent<Item>? {
            switch step {
            case .start:
                step = .connect
                return .state(.connecting)
            case .connect:
                return await connect()
            case .read(var stream, let server):
                // Held outside `step` while reading, so that ending below releases it (which cancels the call).
                step = .done
                return await read(&stream, server: server)
            case .pause(let until):
                do {
                    try await Task.sleep(until: until)
                } catch {
                    return end(nil)
                }
                step = .connect
                return .state(.connecting)
            case .done:
                return nil
            }
        }

        private mutating func connect() async -> FollowEvent<Item>? {
            let connected: (connection: RPCClientConnection, server: Int)
            do throws(RPCError) {
                connected = try await client.connectToServer()
            } catch {
                if Task.isCancelled { return end(nil) }
                guard streams > 0 || options.retryFirstConnection else { return end(error) }
                return lost(error)
            }
            if Task.isCancelled { return end(nil) }
            streams += 1
            received = false
            step = .read(open(connected.connection).makeAsyncIterator(), server: connected.server)
            return .state(.connected(server: client.configuration.serverAddresses[connected.server], stream: streams))
        }

        private mutating func read(_ stream: inout RPCResponseStream<Item>.Iterator, server: Int) async -> FollowEvent<Item>? {
            let error: RPCError
            do {
                if let element = try await stream.next() {
                    if !received {
                        received = true
                        attempt = 0
                    }
                    step = .read(stream, server: server)
                    return .element(element)
                }
                error = RPCError(code: .unavailable, message: "the server ended the stream")
            } catch let failure as RPCError {
                error = failure
            } catch {
                return end(Task.isCancelled ? nil : RPCError(code: .internal, message: "\(error)"))
            }
            // A cancelled task's stream ends early; that is the reader leaving, not the server.
            if Task.isCancelled { return end(nil) }
            if options.retryable.contains(error.code) { client.avoid(server: server) }
            return lost(error)
        }

        /// Pauses before the next attempt, or ends when `error` is not to be retried.
        private mutating func lost(_ error: RPCError) -> FollowEvent<Item>? {
            guard options.retryable.contains(error.code) else { return end(error) }
            let retryAt = ContinuousClock.now + options.backoff.delay(attempt: attempt)
            attempt += 1
            step = .pause(until: retryAt)
            return .state(.waiting(retryAt: retryAt, attempt: attempt, reason: error))
        }

        private mutating func end(_ error: RPCError?) -> FollowEvent<Item>? {
            step = .done
            return .state(.ended(error))
        }
    }
}
