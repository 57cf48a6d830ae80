// Memory allocated and never freed by plain code: scripts/sanitize expects LeakSanitizer to report it even with
// scripts/sanitize-address.supp, which proves the suppressions do not hide leaks outside the toolchain.
final class Node {
    var next: Node?
    let payload = [UInt8](repeating: 1, count: 4096)
}

func leak() {
    let first = Node()
    first.next = Node()
    first.next?.next = first  // A reference cycle: never freed.
}

leak()
print("leaked a cycle")
