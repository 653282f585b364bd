package org.axe4j.schedules;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.layout.Layout;
import org.axe4j.layout.Swizzle;
import org.axe4j.passes.TirxLayout;
import org.axe4j.passes.TirxLayouts;
import org.axe4j.tvm.GlobalsProvider;
import org.axe4j.tvm.Tvm;
import org.axe4j.tvm.TvmObject;

/**
 * The dispatch rules (CPU, CUDA and Trainium) as TVM globals:
 * {@code axe4j.schedules.table()} -> list of {target, op, variant, priority};
 * {@code axe4j.schedules.decide(variant, request_json, layouts)} -> decision JSON;
 * {@code axe4j.schedules.explain(request_json, layouts)} -> list of decision JSON;
 * {@code axe4j.schedules.cpu_packed_weight(cpu_json, K, N, element_bytes)} -> the GEMM weight layout the CPU blocked
 * rule reads in place ({@link org.axe4j.schedules.cpu.PackedWeights}).
 * {@code layouts} are the operands' {@code tirx.TileLayout}s, read with {@link TirxLayouts#fromTvm}.
 */
public final class SchedulesGlobals implements GlobalsProvider {
    public String name() {
        return "axe4j.schedules";
    }

    public void register() {
        Tvm.register("axe4j.schedules.table", args -> {
            List<Object> out = new ArrayList<>();
            for (DispatchTable t : DispatchTable.all()) {
                for (String op : t.ops()) {
                    for (Rule r : t.rules(op)) {
                        Map<String, Object> row = new LinkedHashMap<>();
                        row.put("target", t.targetKind());
                        row.put("op", op);
                        row.put("variant", r.variant());
                        row.put("priority", (long) r.priority());
                        out.add(row);
                    }
                }
            }
            return out;
        }, true);
        Tvm.register("axe4j.schedules.decide", args -> {
            Request call = request(args, 1);
            return DispatchTable.forTarget(call.target()).decide((String) args[0], call).toJson();
        }, true);
        Tvm.register("axe4j.schedules.explain", args -> {
            Request call = request(args, 0);
            return DispatchTable.forTarget(call.target()).explain(call).stream().map(Decision::toJson).toList();
        }, true);
        Tvm.register("axe4j.schedules.cpu_packed_weight", args -> org.axe4j.schedules.cpu.PackedWeights.describe(
                (String) args[0], ((Number) args[1]).longValue(), ((Number) args[2]).longValue(),
                ((Number) args[3]).intValue()), true);
    }

    private static Request request(Object[] args, int at) {
        String json = (String) args[at];
        List<Layout> layouts = new ArrayList<>();
        List<Swizzle> swizzles = new ArrayList<>();
        for (Object o : (List<?>) args[at + 1]) {
            TirxLayout read = TirxLayouts.read((TvmObject) o);
            // a swizzled tile (ComposeLayout) travels as its tile layout plus the swizzle; the rest as before
            layouts.add(read.composed() && read.symbolic().isEmpty() ? read.layout() : TirxLayouts.fromTvm((TvmObject) o));
            swizzles.add(read.composed() ? read.swizzle() : null);
        }
        return Request.fromJson(json, layouts, swizzles);
    }
}
