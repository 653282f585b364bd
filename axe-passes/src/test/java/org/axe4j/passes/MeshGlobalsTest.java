package org.axe4j.passes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import org.axe4j.tvm.Axe4jGlobals;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The axe4j.mesh.* globals, called through TVM's registry, answer with the planner's JSON and text. */
class MeshGlobalsTest {
    static final String REQUEST = "{\"mesh\": {\"shape\": [2, 2], \"axes\": [\"dp\", \"tp\"]}, \"global_shape\": [8, 8],"
            + " \"element_bytes\": 4, \"src\": {\"placements\": \"[Partial(), Shard(0)]\"},"
            + " \"dst\": {\"placements\": \"[Shard(1), Shard(0)]\"}}";

    @BeforeAll
    static void install() {
        Axe4jGlobals.install();
    }

    @Test
    void planExplainAndLocalShards() {
        assertTrue(Axe4jGlobals.providers().contains("axe4j.mesh"), Axe4jGlobals.providers().toString());
        JsonObject plan = JsonParser.parseString((String) Tvm.call("axe4j.mesh.plan", REQUEST)).getAsJsonObject();
        assertEquals("axe4j.mesh.plan/2", plan.get("format").getAsString());
        assertEquals("reduce_scatter", plan.getAsJsonArray("steps").get(0).getAsJsonObject().get("kind").getAsString());
        // each rank holds a 4x8 summand, receives the other member's half of it: 16 floats
        assertEquals(4 * 16 * 4, plan.get("bytes_total").getAsLong());
        assertEquals(plan.get("minimum_bytes").getAsLong(), plan.get("bytes_total").getAsLong());
        String text = (String) Tvm.call("axe4j.mesh.explain", REQUEST);
        assertTrue(text.contains("reduce_scatter over mesh dims [0] (groups of 2)"), text);
        String local = (String) Tvm.call("axe4j.mesh.local_shards", "{\"mesh\": {\"shape\": [2]}, \"global_shape\": [4],"
                + " \"tensor\": {\"placements\": \"[Shard(0)]\"}}");
        assertTrue(local.contains("\"region\":\"[2:4]\""), local);
    }

    @Test
    void errorsNameTheGlobalAndTheProblem() {
        TvmException e = assertThrows(TvmException.class, () -> Tvm.call("axe4j.mesh.local_shards",
                "{\"mesh\": {\"shape\": [4]}, \"global_shape\": [8], \"tensor\": {\"layout\": \"S[(4,2):(1@gpuid,0)]\"}}"));
        assertTrue(e.getMessage().contains("axe4j.mesh.local_shards") && e.getMessage().contains("overlapping data"),
                e.getMessage());
    }
}
