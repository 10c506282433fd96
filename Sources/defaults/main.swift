import Foundation
import ObservableDefaults

/// Runs one command line; returns the exit status.
func runDefaults(_ arguments: [String]) -> Int32 {
    do throws(ToolError) {
        let parsed = try ParsedArguments(arguments)
        guard let verb = parsed.verb else {
            if parsed.options.help {
                Console.out(HelpText.overview)
                return 0
            }
            throw .usage("missing verb")
        }
        if verb == "help" {
            Console.out(parsed.positional.first.flatMap(HelpText.verb) ?? HelpText.overview)
            return 0
        }
        guard let help = HelpText.verb(verb) else { throw .usage("unknown verb '\(verb)'") }
        if parsed.options.help {
            Console.out(help)
            return 0
        }
        let access = SuiteAccess(options: parsed.options)
        let arguments = parsed.positional
        switch verb {
        case "read": try ReadCommands(access: access).read(arguments)
        case "read-type": try ReadCommands(access: access).readType(arguments)
        case "domains": try ReadCommands(access: access).domains(arguments)
        case "find": try ReadCommands(access: access).find(arguments)
        case "path": try ReadCommands(access: access).path(arguments)
        case "write": try WriteCommands(access: access, literalFrom: parsed.literalFrom).write(arguments)
        case "delete": try WriteCommands(access: access, literalFrom: parsed.literalFrom).delete(arguments)
        case "rename": try WriteCommands(access: access, literalFrom: parsed.literalFrom).rename(arguments)
        case "import": try TransferCommands(access: access).import(arguments)
        case "export": try TransferCommands(access: access).export(arguments)
        case "cloud":
            try CloudCommands(
                json: parsed.options.json, addresses: parsed.verbOptions["cloud"] ?? [], literalFrom: parsed.literalFrom
            )
            .run(arguments, prefixes: parsed.verbOptions["prefix"] ?? [])
        case "watch": try WatchCommand(access: access).run(arguments, prefixes: parsed.verbOptions["prefix"] ?? [])
        default: throw .usage("unknown verb '\(verb)'")
        }
        return 0
    } catch {
        Console.err("defaults: \(error.message)")
        return error.exitCode
    }
}

exit(runDefaults(Array(CommandLine.arguments.dropFirst())))
