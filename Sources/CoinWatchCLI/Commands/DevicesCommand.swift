import CoinWatchClient
import CoinWatchCommandLine
import CoinWatchModel
import CoinWatchProto
import CoinWatchRPC

/// `devices register | show | unregister`: a device's APNs registration.
enum DevicesCommand {
    static func register(_ parsed: ParsedArguments, _ context: CommandContext) throws(CLIError) -> Int32 {
        let (device, token) = try usage(CommandCatalog.devicesRegister) { () throws(UsageError) in
            let positionals = try ArgumentReaders.exactly(["DEVICE", "TOKEN"], in: parsed)
            return (try ArgumentReaders.device(positionals[0]), try ArgumentReaders.pushToken(positionals[1]))
        }
        let environment: V1.PushEnvironment = parsed.has("sandbox") ? .sandbox : .production
        let topic = parsed["topic"] ?? ""
        let locale = parsed["locale"] ?? ""
        let session = context.session
        // The whole response: when this registration claimed the device, it carries the device's secret.
        let registered = try context.run { () throws(CLIError) in
            try await session.call { client throws(RPCError) in
                try await client.call(V1.CoinWatch.registerDevice, V1.RegisterDeviceRequest(
                    deviceID: device, apnsToken: token, environment: environment, topic: topic, locale: locale))
            }
        }
        context.emit(Presenter.registeredText(registered), json: Presenter.registeredJSON(registered))
        return ExitStatus.ok
    }

    static func show(_ parsed: ParsedArguments, _ context: CommandContext) throws(CLIError) -> Int32 {
        let device = try usage(CommandCatalog.devicesShow) { () throws(UsageError) in
            try ArgumentReaders.device(ArgumentReaders.exactly(["DEVICE"], in: parsed)[0])
        }
        let session = context.session
        let registration = try context.run { () throws(CLIError) in
            try await session.call { client throws(RPCError) in try await client.device(device) }
        }
        context.emit(Presenter.deviceText(registration), json: Presenter.deviceJSON(registration))
        return ExitStatus.ok
    }

    static func unregister(_ parsed: ParsedArguments, _ context: CommandContext) throws(CLIError) -> Int32 {
        let device = try usage(CommandCatalog.devicesUnregister) { () throws(UsageError) in
            try ArgumentReaders.device(ArgumentReaders.exactly(["DEVICE"], in: parsed)[0])
        }
        let session = context.session
        let existed = try context.run { () throws(CLIError) in
            try await session.call { client throws(RPCError) in try await client.unregisterDevice(device: device) }
        }
        context.emit(
            Presenter.unregisteredText(device: device, existed: existed),
            json: Presenter.deletedJSON(device: device, existed: existed))
        return ExitStatus.ok
    }
}
