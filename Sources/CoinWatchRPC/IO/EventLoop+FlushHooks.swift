/// Something that turns its pending work into connection output at the end of a loop iteration, right before
/// the loop writes its connections: an HTTP/2 session, which drains its library's frames into the connection
/// once for everything a round of jobs (a price fan-out drain, answers from other threads) produced.
package protocol EventLoopFlushHook: AnyObject {
    /// Loop: produce the output now.
    func loopWillFlush()
}

extension EventLoop {
    /// Loop: calls `hook.loopWillFlush()` once at the end of this iteration, before the connections are
    /// written. Cheaper than a job (no allocation, no inbox lock) for work asked for many times per iteration;
    /// the caller keeps its own "already asked" flag so a hook is listed once.
    package func flushBeforeWriting(_ hook: any EventLoopFlushHook) {
        assertInEventLoop()
        flushHooks.append(hook)
    }
}
