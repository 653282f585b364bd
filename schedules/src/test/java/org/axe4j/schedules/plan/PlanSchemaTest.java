package org.axe4j.schedules.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.Gson;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** python/axe4j/plan_schema.json is the schema of the plan records, generated, never hand-edited. */
class PlanSchemaTest {
    private static final Path FILE = Path.of(System.getProperty("user.dir")).getParent()
            .resolve("python/axe4j/plan_schema.json");

    @Test
    @SuppressWarnings("unchecked")
    void pythonsFileIsTheGeneratedOne() throws Exception {
        String onDisk = Files.readString(FILE);
        Map<String, Object> file = new Gson().fromJson(onDisk, Map.class);
        Map<String, Object> java = new Gson().fromJson(PlanSchema.json(), Map.class);
        List<String> differences = differences(java, file);
        assertTrue(differences.isEmpty(), "python/axe4j/plan_schema.json differs from the plan records (run `make "
                + "plan-schema`):\n  " + String.join("\n  ", differences));
        assertEquals(PlanSchema.json(), onDisk, "python/axe4j/plan_schema.json is not formatted as generated: run "
                + "`make plan-schema`");
    }

    @Test
    @SuppressWarnings("unchecked")
    void aRenamedFieldIsReportedWithItsKindAndField() {
        Map<String, Object> java = new Gson().fromJson(PlanSchema.json(), Map.class);
        Map<String, Object> file = new Gson().fromJson(PlanSchema.json(), Map.class);
        Map<String, Object> nestLoop = (Map<String, Object>) ((Map<String, Object>) file.get("records"))
                .get("PlanParts.NestLoop");
        nestLoop.put("stride", nestLoop.remove("strides"));
        List<String> found = differences(java, file);
        assertEquals(2, found.size(), found.toString());
        assertTrue(found.get(0).startsWith("record PlanParts.NestLoop (kinds affine, reduce, cuda-register, "
                + "cuda-register-boxes, cuda-shuffle-reduce): field 'strides': in the records {map=long}, in the file "
                + "absent"), found.get(0));
        assertTrue(found.get(1).contains("field 'stride': in the records absent, in the file {map=long}"),
                found.get(1));
    }

    @Test
    void everyKindIsOneRecordAndEveryComponentHasAType() {
        assertEquals(23, PlanSchema.kindClasses().size());
        assertEquals("cuda-wgmma", PlanSchema.kindOf(CudaPlans.Wgmma.class));
        assertEquals(Map.of("list", Map.of("record", "PlanParts.NestLoop")), fields("CpuPlans.Affine").get("loops"));
        assertEquals(Map.of("optional", "str"), fields("CpuPlans.GemmBlocked").get("kernel"));
        assertEquals("long", fields("CpuPlans.GemmBlocked").get("M"));
        assertEquals("long", fields("CudaPlans.Wgmma").get("wait"));
        assertEquals("long", fields("CudaPlans.Tma").get("global_base"));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> fields(String record) {
        return (Map<String, Object>) ((Map<String, Object>) PlanSchema.schema().get("records")).get(record);
    }

    /** Field by field differences between two schema trees, each naming the record, the kinds using it and the field. */
    @SuppressWarnings("unchecked")
    static List<String> differences(Map<String, Object> java, Map<String, Object> file) {
        List<String> out = new ArrayList<>();
        if (!String.valueOf(java.get("schema")).equals(String.valueOf(file.get("schema")))) {
            out.add("schema version: in the records " + java.get("schema") + ", in the file " + file.get("schema"));
        }
        Map<String, Object> javaKinds = (Map<String, Object>) java.get("kinds");
        Map<String, Object> fileKinds = (Map<String, Object>) file.get("kinds");
        for (String kind : union(javaKinds.keySet(), fileKinds.keySet())) {
            if (!String.valueOf(javaKinds.get(kind)).equals(String.valueOf(fileKinds.get(kind)))) {
                out.add("plan kind '" + kind + "': record in the records " + javaKinds.get(kind) + ", in the file "
                        + fileKinds.get(kind));
            }
        }
        Map<String, Object> javaRecords = (Map<String, Object>) java.get("records");
        Map<String, Object> fileRecords = (Map<String, Object>) file.get("records");
        for (String record : union(javaRecords.keySet(), fileRecords.keySet())) {
            Map<String, Object> j = (Map<String, Object>) javaRecords.getOrDefault(record, Map.of());
            Map<String, Object> f = (Map<String, Object>) fileRecords.getOrDefault(record, Map.of());
            for (String field : union(j.keySet(), f.keySet())) {
                if (!String.valueOf(j.get(field)).equals(String.valueOf(f.get(field)))) {
                    out.add("record " + record + " (kinds " + String.join(", ", kindsUsing(record, java)) + "): field '"
                            + field + "': in the records " + shown(j.get(field)) + ", in the file "
                            + shown(f.get(field)));
                }
            }
        }
        return out;
    }

    private static String shown(Object type) {
        return type == null ? "absent" : type.toString();
    }

    /** The kinds whose record is {@code record} or holds it, directly or deeper. */
    @SuppressWarnings("unchecked")
    private static List<String> kindsUsing(String record, Map<String, Object> schema) {
        Map<String, Object> records = (Map<String, Object>) schema.get("records");
        List<String> out = new ArrayList<>();
        ((Map<String, Object>) schema.get("kinds")).forEach((kind, top) -> {
            if (reaches((String) top, record, records, new LinkedHashSet<>())) {
                out.add(kind);
            }
        });
        return out;
    }

    @SuppressWarnings("unchecked")
    private static boolean reaches(String from, String to, Map<String, Object> records, Set<String> seen) {
        if (from.equals(to)) {
            return true;
        }
        if (!seen.add(from) || !records.containsKey(from)) {
            return false;
        }
        List<String> inner = new ArrayList<>();
        collect(records.get(from), inner);
        return inner.stream().anyMatch(r -> reaches(r, to, records, seen));
    }

    private static void collect(Object spec, List<String> out) {
        if (spec instanceof Map<?, ?> m) {
            m.forEach((k, v) -> {
                if ("record".equals(k)) {
                    out.add((String) v);
                } else {
                    collect(v, out);
                }
            });
        }
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> out = new LinkedHashSet<>(a);
        out.addAll(b);
        return out;
    }

    @Test
    void theValidatorNamesKindAndField() {
        String good = "{\"kind\":\"cuda-mma\",\"schema\":" + PlanSchema.VERSION + ",\"instruction\":\"mma\","
                + "\"init\":\"zero\",\"registers\":{\"D\":4,\"A\":4,\"B\":2,\"C\":4},\"tiles\":[{\"d\":[0],\"c\":[0],"
                + "\"steps\":[{\"a\":[0,1],\"b\":[0]}]}],\"notes\":[]}";
        PlanValidator.validate(good);
        assertEquals("plan kind 'cuda-mma': field 'tiles[0].steps[0].b[0]': expected long, got \"x\"",
                assertThrows(IllegalArgumentException.class,
                        () -> PlanValidator.validate(good.replace("\"b\":[0]", "\"b\":[\"x\"]"))).getMessage());
        assertEquals("plan kind 'cuda-mma': field 'registers.C': missing (required by CudaPlans.MmaRegisters)",
                assertThrows(IllegalArgumentException.class,
                        () -> PlanValidator.validate(good.replace(",\"C\":4", ""))).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> PlanValidator.validate(good.replace("\"init\"", "\"initial\""))).getMessage()
                .startsWith("plan kind 'cuda-mma': field 'initial': unknown field"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> PlanValidator.validate(good.replace("cuda-mma", "cuda-mmma"))).getMessage()
                .startsWith("plan kind 'cuda-mmma': unknown kind"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> PlanValidator.validate(good.replace("\"schema\":" + PlanSchema.VERSION, "\"schema\":0")))
                .getMessage().startsWith("plan kind 'cuda-mma': field 'schema' is 0, expected schema version"));
    }
}
