/// An inline method as one connection calls it.
///
/// Inline calls start and end within one frame's processing, so they need no call
/// object; what they do need, the handler and a context, is kept here once per
/// connection and method. The context is shared by the calls that carry no metadata
/// and no deadline: for them it holds the same values every time, and, since an
/// inline call is never cancelled, its cancellation flag never changes. Loop-confined
/// like its connection.
final class InlineMethod {
    let handler: RPCMethod.InlineHandler
    let context: ServerContext

    init(handler: @escaping RPCMethod.InlineHandler, context: ServerContext) {
        self.handler = handler
        self.context = context
    }
}
