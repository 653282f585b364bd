package org.axe4j.tvm;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.ServiceLoader;

/**
 * The TVM globals axe4j contributes from Java, for the Python package and for tests of the
 * bridge itself:
 * <ul>
 *   <li>{@code axe4j.version()} - the version string;</li>
 *   <li>{@code axe4j.testing.echo(x)} - {@code x} unchanged;</li>
 *   <li>{@code axe4j.testing.echo_all(*args)} - an Array of the arguments;</li>
 *   <li>{@code axe4j.testing.raise(msg)} - throws {@code IllegalStateException(msg)} (a TVM RuntimeError);</li>
 *   <li>{@code axe4j.testing.call_global(name, *args)} - calls TVM global {@code name} from Java;</li>
 *   <li>{@code axe4j.testing.type_keys(*args)} - the kind Java decoded for each argument;</li>
 *   <li>{@code axe4j.providers()} - the names of the installed {@link GlobalsProvider}s.</li>
 * </ul>
 * {@link #install()} loads the libraries (reusing those already in the process), registers all of
 * them, then the globals of every {@link GlobalsProvider} on the classpath (e.g. {@code axe4j.layout.*}
 * from axe-passes); calling it again does nothing. {@link #providers()} names the providers installed.
 */
public final class Axe4jGlobals {
    public static final String VERSION = "0.1.0";
    private static final List<String> PROVIDERS = new java.util.concurrent.CopyOnWriteArrayList<>();
    private static volatile boolean installed;

    private Axe4jGlobals() {}

    public static void install() {
        if (installed) {
            return;
        }
        synchronized (Axe4jGlobals.class) {
            if (installed) {
                return;
            }
            Tvm.load();
            Tvm.register("axe4j.version", args -> VERSION, true);
            Tvm.register("axe4j.testing.echo", args -> {
                requireCount("axe4j.testing.echo", args, 1);
                return args[0];
            }, true);
            Tvm.register("axe4j.testing.echo_all", args -> Arrays.asList(args), true);
            Tvm.register("axe4j.testing.raise", args -> {
                throw new IllegalStateException(String.valueOf(args.length > 0 ? args[0] : "raised from Java"));
            }, true);
            Tvm.register("axe4j.testing.call_global", args -> {
                if (args.length < 1 || !(args[0] instanceof String)) {
                    throw new IllegalArgumentException("axe4j.testing.call_global(name, *args): name must be a string");
                }
                return Tvm.function((String) args[0]).call(Arrays.copyOfRange(args, 1, args.length));
            }, true);
            Tvm.register("axe4j.testing.type_keys", args -> {
                List<String> kinds = new ArrayList<>(args.length);
                for (Object arg : args) {
                    kinds.add(kindOf(arg));
                }
                return kinds;
            }, true);
            List<String> names = new ArrayList<>();
            ServiceLoader.load(GlobalsProvider.class, Axe4jGlobals.class.getClassLoader()).stream()
                    .map(ServiceLoader.Provider::get)
                    .sorted(Comparator.comparing(GlobalsProvider::name))
                    .forEach(p -> {
                        p.register();
                        names.add(p.name());
                    });
            Tvm.register("axe4j.providers", args -> List.copyOf(PROVIDERS), true);
            PROVIDERS.addAll(names);
            installed = true;
        }
    }

    /** The names of the {@link GlobalsProvider}s whose globals {@link #install()} registered. */
    public static List<String> providers() {
        return List.copyOf(PROVIDERS);
    }

    /** The kind name Java reports for a decoded value: TVM's type key for objects. */
    static String kindOf(Object value) {
        if (value == null) {
            return "None";
        }
        if (value instanceof Long) {
            return "Int";
        }
        if (value instanceof Boolean) {
            return "Bool";
        }
        if (value instanceof Double) {
            return "Float";
        }
        if (value instanceof String) {
            return "String";
        }
        if (value instanceof byte[]) {
            return "Bytes";
        }
        if (value instanceof DataType) {
            return "DataType";
        }
        if (value instanceof Device) {
            return "Device";
        }
        if (value instanceof List) {
            return "Array";
        }
        if (value instanceof java.util.Map) {
            return "Map";
        }
        if (value instanceof com.sun.jna.Pointer) {
            return "OpaquePtr";
        }
        if (value instanceof TvmObject) {
            return ((TvmObject) value).typeKey();
        }
        return value.getClass().getName();
    }

    private static void requireCount(String name, Object[] args, int count) {
        if (args.length != count) {
            throw new IllegalArgumentException(name + " takes " + count + " argument(s), got " + args.length);
        }
    }
}
