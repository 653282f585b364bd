package org.axe4j.mesh;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import java.util.List;

/**
 * The JSON plan format ({@code "format": "axe4j.mesh.plan/2"}), read by the Python executor on each rank.
 * Offsets are boxes {@code {"base": b, "extents": [...], "strides": [...]}} (offsets {@code b + sum i_k * s_k},
 * row-major in i); copies and the global maps are lists of {@code [from_box, to_box]} pairs of equal extents.
 * Nothing in it is per element, so its size does not grow with the tensor. See docs/mesh.md.
 */
public final class PlanJson {
    public static final String FORMAT = "axe4j.mesh.plan/2";

    private PlanJson() {}

    public static String write(Plan plan) {
        return new Gson().toJson(toJson(plan));
    }

    public static JsonObject toJson(Plan plan) {
        JsonObject o = new JsonObject();
        o.addProperty("format", FORMAT);
        JsonObject mesh = new JsonObject();
        mesh.add("shape", longs(plan.src().mesh().shape()));
        JsonArray axes = new JsonArray();
        plan.src().mesh().axes().forEach(a -> axes.add(a.name()));
        mesh.add("axes", axes);
        o.add("mesh", mesh);
        o.add("global_shape", longs(plan.src().globalShape().dims()));
        o.addProperty("element_bytes", plan.elementBytes());
        o.add("src", tensor(plan.src()));
        o.add("dst", tensor(plan.dst()));
        JsonArray steps = new JsonArray();
        for (int i = 0; i < plan.steps().size(); i++) {
            Plan.Step st = plan.steps().get(i);
            JsonObject s = new JsonObject();
            s.addProperty("kind", st.kindText());
            s.add("mesh_dims", ints(st.meshDims()));
            s.addProperty("out", st.out());
            JsonArray bytes = new JsonArray();
            for (int r = 0; r < plan.rankCount(); r++) {
                bytes.add(plan.bytesReceived(r, i));
            }
            s.add("bytes_per_rank", bytes);
            steps.add(s);
        }
        o.add("steps", steps);
        JsonArray perRank = new JsonArray();
        for (int r = 0; r < plan.rankCount(); r++) {
            perRank.add(plan.bytesReceived(r));
        }
        o.add("bytes_per_rank", perRank);
        o.addProperty("bytes_total", plan.bytesTotal());
        o.addProperty("minimum_bytes", plan.minimumBytes());
        o.addProperty("planner", plan.planner());
        o.addProperty("at_minimum", plan.atMinimum());
        o.addProperty("excess_bytes", plan.excessBytes());
        if (!plan.note().isEmpty()) {
            o.addProperty("note", plan.note());
        }
        JsonArray ranks = new JsonArray();
        for (int r = 0; r < plan.rankCount(); r++) {
            ranks.add(rank(plan, r));
        }
        o.add("ranks", ranks);
        return o;
    }

    private static JsonObject tensor(DistTensor t) {
        JsonObject o = new JsonObject();
        o.addProperty("layout", t.layout().toString());
        o.add("partial_dims", ints(t.partialDims()));
        o.add("padded_shape", longs(t.paddedShape().dims()));
        return o;
    }

    private static JsonObject rank(Plan plan, int r) {
        JsonObject o = new JsonObject();
        RankMaps maps = plan.maps().get(r);
        o.addProperty("rank", r);
        o.addProperty("src_size", maps.srcSize());
        o.addProperty("dst_size", maps.dstSize());
        o.add("src_global", pairs(maps.srcGlobal()));
        o.add("dst_global", pairs(maps.dstGlobal()));
        o.add("naive_src", pairs(maps.naiveSrc()));
        JsonArray steps = new JsonArray();
        for (RankStep st : plan.rankSteps().get(r)) {
            JsonObject s = new JsonObject();
            s.addProperty("kind", st.kind().json());
            s.add("group", ints(st.group()));
            s.addProperty("in", st.in());
            s.addProperty("out", st.out());
            JsonArray send = new JsonArray();
            st.send().forEach(b -> send.add(box(b)));
            s.add("send", send);
            if (st.sendCounts() != null) {
                s.add("send_counts", longs(st.sendCounts()));
                s.add("recv_counts", longs(st.recvCounts()));
            }
            s.addProperty("root", st.root());
            s.addProperty("out_size", st.outSize());
            s.addProperty("bytes", org.axe4j.layout.Checks.mul("bytes of a step", st.elements(), plan.elementBytes()));
            steps.add(s);
        }
        o.add("steps", steps);
        JsonArray copies = new JsonArray();
        for (Copy c : plan.copies().get(r)) {
            JsonObject j = new JsonObject();
            j.addProperty("from", c.from());
            j.add("pairs", pairs(c.pairs()));
            copies.add(j);
        }
        o.add("copies", copies);
        return o;
    }

    static JsonObject box(Box b) {
        JsonObject o = new JsonObject();
        o.addProperty("base", b.base());
        o.add("extents", longs(b.extents()));
        o.add("strides", longs(b.strides()));
        return o;
    }

    private static JsonArray pairs(List<BoxPair> pairs) {
        JsonArray a = new JsonArray();
        for (BoxPair p : pairs) {
            JsonArray pair = new JsonArray();
            pair.add(box(p.from()));
            pair.add(box(p.to()));
            a.add(pair);
        }
        return a;
    }

    private static JsonArray longs(long[] v) {
        JsonArray a = new JsonArray();
        for (long x : v) {
            a.add(x);
        }
        return a;
    }

    private static JsonArray ints(int[] v) {
        JsonArray a = new JsonArray();
        for (int x : v) {
            a.add(x);
        }
        return a;
    }

    private static JsonArray ints(List<Integer> v) {
        JsonArray a = new JsonArray();
        v.forEach(a::add);
        return a;
    }

    private static JsonArray longs(List<Long> v) {
        JsonArray a = new JsonArray();
        v.forEach(a::add);
        return a;
    }

}
