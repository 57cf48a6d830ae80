public import CoinWatchRPC
import CoinWatchProto

/// The descriptors reflection serves, generated into `Generated/ReflectionDescriptors.pb.swift` by
/// `scripts/generate-proto` from proto/ (and drift-checked with the rest of the generated code).
enum ReflectionDescriptors {
    struct File: Sendable {
        let name: String
        let dependencies: [String]
        /// Every fully qualified service, method, message and enum the file defines.
        let symbols: [String]
        /// The serialized `google.protobuf.FileDescriptorProto`.
        let descriptor: [UInt8]
    }
}

/// gRPC server reflection, `grpc.reflection.v1` and `v1alpha` (the same messages under two package names;
/// tools still ask for either): lists the services the server serves and hands out the descriptors of the
/// files defining them, so `grpcurl -plaintext HOST:PORT list` and `describe` work without local .proto files.
public struct GRPCReflectionService: Sendable {
    static let v1 = WireMethod<GRPCReflectionRequest, GRPCReflectionResponse>(
        path: "grpc.reflection.v1.ServerReflection/ServerReflectionInfo", isClientStreaming: true, isServerStreaming: true)
    static let v1alpha = WireMethod<GRPCReflectionRequest, GRPCReflectionResponse>(
        path: "grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", isClientStreaming: true, isServerStreaming: true)

    /// The services listed: those served, with a descriptor to describe them by.
    let services: [String]

    /// - Parameter services: the fully qualified names of the services the server serves; the reflection
    ///   services themselves are added.
    public init(services: [String]) {
        let described = Set(ReflectionDescriptors.files.flatMap(\.symbols))
        let all = Set(services + ["grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"])
        self.services = all.filter { described.contains($0) }.sorted()
    }

    public var methods: [RPCMethod] {
        let reflection = self
        return [Self.v1, Self.v1alpha].map { method in
            .bidiStream(method, eachRequest: { request, stream in
                stream.send(reflection.answer(request))
            })
        }
    }

    func answer(_ request: GRPCReflectionRequest) -> GRPCReflectionResponse {
        let answer: GRPCReflectionResponse.Answer
        switch request.question {
        case .listServices:
            answer = .services(services)
        case .fileByName(let name):
            if let file = ReflectionDescriptors.files.first(where: { $0.name == name }) {
                answer = .files(Self.withDependencies(file))
            } else {
                answer = .error(code: RPCError.Code.notFound.rawValue, message: "no file named '\(name)'")
            }
        case .fileContainingSymbol(let symbol):
            if let file = ReflectionDescriptors.files.first(where: { $0.symbols.contains(symbol) }) {
                answer = .files(Self.withDependencies(file))
            } else {
                answer = .error(code: RPCError.Code.notFound.rawValue, message: "no symbol '\(symbol)'")
            }
        case .fileContainingExtension(let type, let number):
            answer = .error(code: RPCError.Code.notFound.rawValue, message: "no extension \(number) of '\(type)'")
        case .allExtensionNumbers(let type):
            if ReflectionDescriptors.files.contains(where: { $0.symbols.contains(type) }) {
                answer = .extensionNumbers(type: type, numbers: [])
            } else {
                answer = .error(code: RPCError.Code.notFound.rawValue, message: "no message type '\(type)'")
            }
        case .none:
            answer = .error(code: RPCError.Code.invalidArgument.rawValue, message: "the request asks nothing")
        }
        return GRPCReflectionResponse(validHost: request.host, originalRequest: request.encoded, answer: answer)
    }

    /// The file's descriptor followed by those of everything it imports, each once.
    static func withDependencies(_ file: ReflectionDescriptors.File) -> [[UInt8]] {
        var names = [file.name]
        var index = 0
        while index < names.count {
            let current = ReflectionDescriptors.files.first { $0.name == names[index] }
            for dependency in current?.dependencies ?? [] where !names.contains(dependency) { names.append(dependency) }
            index += 1
        }
        return names.compactMap { name in ReflectionDescriptors.files.first { $0.name == name }?.descriptor }
    }
}
