package org.axe4j.passes.transform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.axe4j.tvm.Axe4jGlobals;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmException;
import org.axe4j.tvm.TvmObject;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The layout passes in a JVM that loaded TVM itself: the kernels of python/tests/test_passes_jvm.py, built with TVM's
 * constructors, run through {@code transform.Sequential} on an IRModule. The results must equal
 * jvm-hosted-passes.json, which the Python test checks its own results against: same passes, same answers, both hosts.
 */
class JvmHostedPassesTest {
    private static final long[] M8 = {8, 8};

    @BeforeAll
    static void install() {
        Axe4jGlobals.install();
    }

    static TvmObject threeAtOnce() {
        TirBuilder b = new TirBuilder();
        TvmObject sf = b.param("Sf", 40);
        TvmObject bb = b.param("B", 8, 8);
        TvmObject a = b.decl("A", M8, "S[(8,8):(1,8)]", sf);
        TvmObject y = b.alloc("Y", new long[] {8, 4}, "S[(8,8):(8,1)]", "global");
        b.call("exp", "thread", TirBuilder.region(bb, 0, 8, 0, 8), TirBuilder.region(a, 0, 8, 0, 8));
        b.call("add", "thread", TirBuilder.region(bb, 0, 8, 0, 8), TirBuilder.region(bb, 0, 8, 0, 8),
                TirBuilder.region(y, 0, 8, 0, 3));
        return b.module("k");
    }

    static TvmObject lanes() {
        TirBuilder b = new TirBuilder();
        TvmObject a = b.param("A", 64);
        TvmObject bb = b.param("B", 64);
        TvmObject r = b.alloc("r", new long[] {64}, "S[64:1@laneid]", "local");
        b.call("copy", "warp", TirBuilder.region(r, 0, 64), TirBuilder.region(a, 0, 64));
        b.call("copy", "warp", TirBuilder.region(bb, 0, 64), TirBuilder.region(r, 0, 64));
        return b.module("k");
    }

    static TvmObject twoStage() {
        TirBuilder b = new TirBuilder();
        TvmObject a = b.param("A", 8, 8);
        TvmObject bb = b.param("B", 8, 8);
        TvmObject c = b.param("C", 8, 8);
        TvmObject x = b.alloc("X", M8, null, "global");
        TvmObject y = b.alloc("Y", M8, null, "global");
        b.call("add", "thread", full(x), full(a), full(bb));
        b.call("exp", "thread", full(y), full(x));
        b.call("mul", "thread", full(c), full(y), full(a));
        return b.module("k");
    }

    static TvmObject columnMajor() {
        TirBuilder b = new TirBuilder();
        TvmObject af = b.param("Af", 64);
        TvmObject bb = b.param("B", 8, 8);
        TvmObject a = b.decl("A", M8, "S[(8,8):(1,8)]", af);
        TvmObject x = b.alloc("X", M8, null, "global");
        b.call("exp", "thread", full(x), full(a));
        b.call("add", "thread", full(bb), full(x), full(a));
        return b.module("k");
    }

    private static Object full(TvmObject buffer) {
        return TirBuilder.region(buffer, 0, 8, 0, 8);
    }

    static TvmObject run(TvmObject mod, Object... passes) {
        Object seq = Tvm.call("transform.Sequential", List.of(passes), 0L, "jvm-hosted", List.of(), false);
        return (TvmObject) Tvm.call("transform.RunPass", seq, mod);
    }

    /** The same record as test_passes_jvm.results() in Python. */
    static Map<String, Object> results(TvmObject mod) {
        Map<String, Object> out = new TreeMap<>();
        String verified;
        try {
            run(mod, Tvm.call("axe4j.passes.VerifyLayouts", "llvm"));
            verified = "ok";
        } catch (TvmException e) {
            verified = e.tvmMessage();
        }
        out.put("verify", verified);
        TvmObject after = run(mod, Tvm.call("axe4j.passes.InferLayouts", "llvm"),
                Tvm.call("axe4j.passes.CanonicalizeLayouts"));
        TvmObject func = (TvmObject) Tvm.call("ir.Module_Lookup_str", after, "k");
        Object notes = PassGlobals.attr(func, PassGlobals.CHOICES_ATTR);
        out.put("notes", notes == null ? List.of() : new ArrayList<>((List<?>) notes));
        Map<String, Object> layouts = new TreeMap<>();
        for (TirFunction.Buffer b : TirFunction.read("k", func).buffers()) {
            layouts.put(b.name(), b.layout() == null ? "none" : String.valueOf(Tvm.call("axe4j.layout.to_text", b.layout())));
        }
        out.put("layouts", layouts);
        return out;
    }

    @Test
    void passesGiveThePythonResultsInAJvmHostedTvm() throws IOException {
        Map<String, TvmObject> kernels = new LinkedHashMap<>();
        kernels.put("three_at_once", threeAtOnce());
        kernels.put("lanes", lanes());
        kernels.put("two_stage", twoStage());
        kernels.put("column_major", columnMajor());
        String text;
        try (InputStream in = JvmHostedPassesTest.class.getResourceAsStream("/jvm-hosted-passes.json")) {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Map<?, ?> expected = (Map<?, ?>) Tvm.call("ffi.json.Parse", text);
        List<String> names = new ArrayList<>();
        expected.keySet().forEach(k -> names.add(String.valueOf(k)));
        assertEquals(new java.util.TreeSet<>(kernels.keySet()), new java.util.TreeSet<>(names));
        for (var e : kernels.entrySet()) {
            Map<String, Object> got = results(e.getValue());
            Map<?, ?> want = (Map<?, ?>) expected.get(e.getKey());
            assertEquals(String.valueOf(want.get("verify")), got.get("verify"), e.getKey() + " verify");
            assertEquals(strings((List<?>) want.get("notes")), strings((List<?>) got.get("notes")), e.getKey() + " notes");
            assertEquals(new TreeMap<>(stringMap((Map<?, ?>) want.get("layouts"))), got.get("layouts"), e.getKey() + " layouts");
        }
        assertTrue(String.valueOf(((Map<?, ?>) expected.get("three_at_once")).get("verify")).contains("3 layout violations"));
    }

    private static List<String> strings(List<?> xs) {
        List<String> out = new ArrayList<>();
        xs.forEach(x -> out.add(String.valueOf(x)));
        return out;
    }

    private static Map<String, Object> stringMap(Map<?, ?> m) {
        Map<String, Object> out = new TreeMap<>();
        m.forEach((k, v) -> out.put(String.valueOf(k), String.valueOf(v)));
        return out;
    }
}
