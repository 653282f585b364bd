package org.axe4j.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.axe4j.layout.AxeException;

/**
 * Command-line arguments of one command: positionals, {@code --name value} (or {@code --name=value})
 * options from a fixed set, and flags. Anything else is a usage error (INVALID, exit code 2).
 */
final class Args {
    private final String command;
    private final List<String> positional = new ArrayList<>();
    private final Map<String, String> options = new TreeMap<>();
    private final Set<String> flags = new java.util.TreeSet<>();

    Args(String command, List<String> args, Set<String> valueOptions, Set<String> flagOptions) {
        this.command = command;
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (a.startsWith("--")) {
                String name = a.substring(2);
                String value = null;
                int eq = name.indexOf('=');
                if (eq >= 0) {
                    value = name.substring(eq + 1);
                    name = name.substring(0, eq);
                }
                if (flagOptions.contains(name) && value == null) {
                    flags.add(name);
                } else if (valueOptions.contains(name)) {
                    if (value == null) {
                        if (i + 1 >= args.size()) {
                            throw usage("option --" + name + " needs a value");
                        }
                        value = args.get(++i);
                    }
                    if (options.put(name, value) != null) {
                        throw usage("option --" + name + " is given twice");
                    }
                } else {
                    throw usage("unknown option --" + name);
                }
            } else {
                positional.add(a);
            }
        }
    }

    AxeException usage(String what) {
        return new AxeException(AxeException.Kind.INVALID,
                "axe layout " + command + ": " + what + " (see: axe layout --help)");
    }

    List<String> positional() {
        return positional;
    }

    Optional<String> option(String name) {
        return Optional.ofNullable(options.get(name));
    }

    String required(String name) {
        return option(name).orElseThrow(() -> usage("option --" + name + " is required"));
    }

    boolean flag(String name) {
        return flags.contains(name);
    }

    /** All positionals joined by spaces: a layout typed without quotes arrives as several words. */
    String joinedLayout() {
        if (positional.isEmpty()) {
            throw usage("a LAYOUT argument is required, e.g. 'S[(8,16):(16,1)]'");
        }
        return String.join(" ", positional);
    }
}
