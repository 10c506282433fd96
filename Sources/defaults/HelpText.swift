/// The text of `defaults --help` and `defaults VERB --help`.
enum HelpText {
    static let overview = """
        defaults: read, write and watch ObservableDefaults suites (one JSON or property-list file per suite).

        Usage: defaults VERB [arguments] [options]

        Verbs:
          read [suite [key]]            print every suite, one suite, or one value
          read-type suite key           print the type of a value
          domains                       list the suites in the directory on one line
          find word                     search keys and values of every suite
          path suite                    print the path of a suite's file
          write suite key [flag] value  store a value (a bare value is property-list text, else a string)
          delete suite [key]            remove a key, or the whole suite file
          rename suite old new          move a value to a new key
          import suite file|-           replace a suite's contents with a JSON or plist file (- is stdin)
          export suite file|-           write a suite as an XML plist or JSON file (- is stdout)
          watch suite [key...]          print every change as it happens, from any process or a hand edit
          cloud read|write|delete|watch the cloud store (etcd) shared across machines; see 'defaults cloud --help'

        Options (any verb):
          --directory DIR   the suites directory; default: $OBSERVABLE_DEFAULTS_DIRECTORY, else
                            $XDG_CONFIG_HOME/observable-defaults, else ~/.config/observable-defaults
          --format FORMAT   json (default) or plist: the format of suites this command creates
          --json            machine-readable output (read, read-type, domains, find, path, watch)
          --system          read or write the suite's system file instead of its own (root): NAME.json in
                            the first $XDG_CONFIG_DIRS directory's observable-defaults/, else /etc/xdg's
          --managed         the same for the managed (forced) file: NAME.json in
                            $OBSERVABLE_DEFAULTS_MANAGED_DIRECTORY, else /etc/observable-defaults/managed
          -h, --help        show help; 'defaults VERB --help' shows a verb's help

        A suite named NAME is the file NAME.json (or NAME.plist) in the directory. A suite argument with a '/'
        is a file path (/etc/app/settings.plist, ./x.json). -g is the global domain (NSGlobalDomain, read by
        every suite); macOS's -currentHost is not supported.
        Errors are printed on stderr with the suite, key, file, line and column involved; the exit status
        is 1 when an operation fails and 2 when the command line is wrong.
        """

    static func verb(_ verb: String) -> String? {
        switch verb {
        case "read":
            return """
                Usage: defaults read [--show-origin] [suite [key]] [--json]

                Without arguments, prints every suite in the directory. With a suite, prints its keys and values;
                with a key too, prints that value (a string is printed as it is, without quotes). This is the
                suite's file, as on macOS; --show-origin prints the effective values through the suite's layers
                (managed, the file, system files, the global domain), each with its layer and file.
                Human output looks like macOS 'defaults read': { key = value; }, arrays as ( ... ), booleans as
                1/0, dates as 2024-05-01 12:30:00 +0000, data as {length = 2, bytes = 0x0aff}.
                With --json the output is JSON: dates are ISO 8601 UTC strings, data is base64.
                Fails when the suite or the key does not exist, or the file does not parse (with line and column).
                """
        case "read-type":
            return """
                Usage: defaults read-type suite key [--json]

                Prints the type of the value: 'Type is string' (or integer, float, boolean, date, data, array,
                dictionary). Every floating-point number is 'float', as on macOS. In a JSON suite, where dates
                and data are stored as strings, says what the string holds: 'Type is string (an ISO 8601 date)'
                or 'Type is string (base64 data, 2 bytes)'. With --json prints the type name as a JSON string.
                """
        case "domains":
            return """
                Usage: defaults domains [--json]

                Lists the suites in the directory on one line, separated by ', ' as on macOS (a JSON array with
                --json). Hidden files, such as lock files (.NAME.json.lock) and temporary files, are not suites.
                """
        case "find":
            return """
                Usage: defaults find word [--json]

                Searches every suite for keys and string values containing word (ignoring case); a suite whose
                name contains word is shown whole.
                """
        case "path":
            return """
                Usage: defaults path suite [--json] [--format json|plist]

                Prints the path of the suite's file, or where it would be created (in --format) if it does not
                exist yet. With --json: {"path": ..., "exists": true|false}.
                """
        case "write":
            return """
                Usage: defaults write suite key value
                       defaults write suite key TYPE-FLAG value
                       defaults write suite '{ key = value; ... }'    (replaces the whole suite)
                       defaults write suite key -array [item...]      (-array-add appends)
                       defaults write suite key -dict [key value...]  (-dict-add merges)

                Type flags:
                  -string TEXT            a string (also for text starting with '-')
                  -int, -integer N        a 64-bit integer
                  -float, -double X       a floating-point number
                  -bool, -boolean B       YES, NO, true, false, 1 or 0 (any case)
                  -date D                 ISO 8601 (2024-05-01T12:30:00Z, 2024-05-01T12:30:00.250+02:00),
                                          2024-05-01 12:30:00 +0000, or 2024-05-01 (midnight UTC)
                  -data HEX               bytes in hexadecimal (0aff, <0a ff> or 0x0aff)
                Items of -array and values of -dict are strings unless preceded by a type flag:
                  defaults write app ports -array -int 80 -int 443
                  defaults write app limits -dict cpu -float 1.5 name web
                A bare value is parsed as on macOS: old-style property-list text ('{ a = 1; b = (x, "y z"); }',
                '( 1, 2 )', <0aff>) is a dictionary, array or data whose leaves are strings; an XML fragment
                ('<integer>5</integer>', '<dict>...</dict>') has the XML types; anything else is a string.
                Text that starts like a property list but does not parse is an error: use -string to store it.
                A key starting with '-' goes after '--': defaults write suite -- -key value.
                The suite is created (in --format, default json) if it does not
                exist. A suite whose file does not parse is not written; fix the file first.
                With --system or --managed (as root), the suite's system or managed file is written instead,
                with the same lock and atomic replace; a new one is made mode 0644 (its directory 0755), so every
                user's programs read it, and running programs see the change live:
                  sudo defaults write --system com.example.daemon workers -int 4
                  sudo defaults write --managed com.example.daemon updateChannel stable
                """
        case "delete":
            return """
                Usage: defaults delete suite [key]

                Removes the key from the suite, or, without a key, deletes the suite's file.
                Fails when the suite or the key does not exist.
                With --system or --managed (as root), removes it from the suite's system or managed file.
                """
        case "rename":
            return """
                Usage: defaults rename suite old-key new-key

                Moves the value of old-key to new-key (replacing any value there), in one write.
                """
        case "import":
            return """
                Usage: defaults import suite file|-

                Replaces the suite's contents with the keys and values of a JSON file or a property list (XML
                or binary). The format is detected from the content, not from the file name: a file starting
                with 'bplist' or '<' (after white space) is a property list, anything else JSON. '-' reads stdin.
                Keys that do not change are not rewritten, so observers hear only real changes.
                """
        case "export":
            return """
                Usage: defaults export suite file|- [--format json|plist]

                Writes the suite's keys and values as an XML property list, as on macOS; as JSON with
                --format json or, without --format, when the file name ends in .json. '-' writes to stdout.
                A regular file is replaced atomically (keeping its permissions); a symlink is written through to
                its target and stays a link; FIFOs, character devices, /dev/stdout and /dev/fd/N are written in
                place. Directories, sockets and block devices are refused.
                """
        case "watch":
            return """
                Usage: defaults watch suite [key...] [--prefix p] [--json]

                Prints one line per changed key until interrupted (Ctrl-C or SIGTERM, exit status 0): changes
                from any process (another 'defaults write', a program using the library) and hand edits of the
                file, seen through inotify. Only the given keys, or keys starting with --prefix, are shown.
                  human:  12:30:00.250 outside theme = dark    (or: theme deleted)
                  --json: {"time":"2024-05-01T12:30:00.250Z","origin":"outside","key":"theme","value":"dark","type":"string"}
                          removals have "removed":true and no value.
                The suite does not need to exist yet. A file that stops parsing is reported on stderr, and
                watching goes on.
                """
        case "cloud":
            return """
                Usage: defaults cloud read [key] [--json]
                       defaults cloud write key [type flag] value
                       defaults cloud delete key
                       defaults cloud watch [key...] [--prefix p] [--json]
                Option: --cloud etcd://host:2379[,host2:2379]/namespace (default: $OBSERVABLE_DEFAULTS_CLOUD)
                        etcds://… for TLS, with $OBSERVABLE_DEFAULTS_CLOUD_CA, _CERT and _KEY (PEM files)

                The cloud store (CloudKeyValueStore) of every machine configured with the same etcd address and
                namespace. Values use the same syntax and output as read and write (type flags, -array, -dict,
                -array-add, -dict-add; a bare value is property-list text, else a string).
                  read     waits for the server, then prints every key or one value
                  write    stores a value and waits (5 seconds at most) until the server has it
                  delete   removes a key and waits until the server has the removal
                  watch    prints one line per key changed from elsewhere, with its reason, until interrupted:
                    human:  12:30:00.250 serverChange theme = dark    (or: theme deleted)
                    --json: {"time":"…","reason":"serverChange","key":"theme","value":"dark","type":"string"}
                A cluster that does not answer (unreachable endpoints, a wrong password) is an error with exit
                status 1 naming the cluster and the reason; a write it did not confirm is not uploaded later (the
                tool keeps no local copy). 'watch' reports such errors on stderr and keeps trying.
                """
        default: return nil
        }
    }
}
