extension IOError {
    /// The description for a sentence that already names `address` ("cannot listen on 127.0.0.1:7878: …"), so the
    /// address is said once: the detail is left out when it is that address (`bind failed: Address already in use
    /// (errno 98)`), and the address is cut from its front when the detail starts with it (the resolver's
    /// `host:port: reason`). A different detail (the resolved address of a host name) stays.
    public func description(naming address: String) -> String {
        guard let detail else { return description }
        var shortened = self
        if detail == address {
            shortened.detail = nil
        } else if detail.hasPrefix(address + ": ") {
            shortened.detail = String(detail.dropFirst(address.count + 2))
        }
        return shortened.description
    }
}
