package org.axe4j.mesh;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import java.util.List;

/**
 * The JSON plan format ({@code "format": "axe4j.mesh.plan/1"}), read by the Python executor on each rank.
 * Offset lists are run-length encoded: {@code send} as flat {@code [start, length, ...]} pairs, copies and the
 * global maps as flat {@code [from, to, length, ...]} triples (consecutive on both sides). See docs/mesh.md.
 */
public final class PlanJson {
    public static final String FORMAT = "axe4j.mesh.plan/1";

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
        return o;
    }

    private static JsonObject rank(Plan plan, int r) {
        JsonObject o = new JsonObject();
        o.addProperty("rank", r);
        o.addProperty("src_size", plan.srcHoldings().localSize(r));
        o.addProperty("dst_size", plan.dstHoldings().localSize(r));
        o.add("src_global", globalMap(plan.srcHoldings().local[r]));
        o.add("dst_global", globalMap(plan.dstHoldings().local[r]));
        o.add("naive_src", naiveContribution(plan, r));
        JsonArray steps = new JsonArray();
        for (RankStep st : plan.rankSteps().get(r)) {
            JsonObject s = new JsonObject();
            s.addProperty("kind", st.kind().json());
            s.add("group", ints(st.group()));
            s.addProperty("in", st.in());
            s.addProperty("out", st.out());
            s.add("send", runs(st.send()));
            if (st.sendCounts() != null) {
                s.add("send_counts", ints(st.sendCounts()));
                s.add("recv_counts", ints(st.recvCounts()));
            }
            s.addProperty("root", st.root());
            s.addProperty("out_size", st.outSize());
            s.addProperty("bytes", org.axe4j.layout.Checks.mul("bytes of a copy", st.elements(), plan.elementBytes()));
            steps.add(s);
        }
        o.add("steps", steps);
        JsonArray copies = new JsonArray();
        for (Copy c : plan.copies().get(r)) {
            JsonObject j = new JsonObject();
            j.addProperty("from", c.from());
            j.add("runs", triples(c.at(), c.to()));
            copies.add(j);
        }
        o.add("copies", copies);
        return o;
    }

    /**
     * What rank r sends to rank 0 in the naive gather-and-scatter baseline, as (src offset, global index) triples:
     * for each element, the lowest-rank holder's copy, or (partial source) every member of its partial group.
     */
    private static JsonArray naiveContribution(Plan plan, int r) {
        Holdings hs = plan.srcHoldings();
        int total = hs.where[0].length;
        IntList at = new IntList();
        IntList x = new IntList();
        for (int e = 0; e < total; e++) {
            if (hs.where[r][e] < 0) {
                continue;
            }
            int first = 0;
            while (hs.where[first][e] < 0) {
                first++;
            }
            boolean contributes = first == r;
            if (!contributes && plan.src().isPartial()) {
                for (int m : hs.ranks.group(first, plan.src().partialDims())) {
                    contributes |= m == r;
                }
            }
            if (contributes) {
                at.add(hs.where[r][e]);
                x.add(e);
            }
        }
        return triples(at.toArray(), x.toArray());
    }

    private static JsonArray globalMap(int[] local) {
        IntList at = new IntList();
        IntList x = new IntList();
        for (int o = 0; o < local.length; o++) {
            if (local[o] >= 0) {
                at.add(o);
                x.add(local[o]);
            }
        }
        return triples(at.toArray(), x.toArray());
    }

    /** {@code [start, length, ...]} runs of consecutive values. */
    static JsonArray runs(int[] v) {
        JsonArray a = new JsonArray();
        int i = 0;
        while (i < v.length) {
            int j = i + 1;
            while (j < v.length && v[j] == v[j - 1] + 1) {
                j++;
            }
            a.add(v[i]);
            a.add(j - i);
            i = j;
        }
        return a;
    }

    /** {@code [from, to, length, ...]} runs consecutive in both lists. */
    static JsonArray triples(int[] from, int[] to) {
        JsonArray a = new JsonArray();
        int i = 0;
        while (i < from.length) {
            int j = i + 1;
            while (j < from.length && from[j] == from[j - 1] + 1 && to[j] == to[j - 1] + 1) {
                j++;
            }
            a.add(from[i]);
            a.add(to[i]);
            a.add(j - i);
            i = j;
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
