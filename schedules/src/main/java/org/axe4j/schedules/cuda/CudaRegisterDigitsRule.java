package org.axe4j.schedules.cuda;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.axe4j.layout.Axis;
import org.axe4j.layout.Iter;
import org.axe4j.schedules.AffineAccess;
import org.axe4j.schedules.Declined;
import org.axe4j.schedules.ElementwiseLoops;
import org.axe4j.schedules.Operand;
import org.axe4j.schedules.PlanAccesses;
import org.axe4j.schedules.Request;
import org.axe4j.schedules.Rule;
import org.axe4j.schedules.plan.CudaPlans;
import org.axe4j.schedules.plan.PlanParts;

/**
 * Element-wise tile ops on register tiles whose region no register plan walks ({@link CudaRegisterRule} declines:
 * the region crosses a digit part way, a run-time start may cross one): every thread visits each of its own slots.
 *
 * <p>The first register operand P is the partition. Its shard iters, row-major (iter k below the product
 * {@code below_k} of the extents inside it), give the flat index of the element thread t holds in slot counters
 * {@code c}: {@code x = sum_reg c_k below_k + sum_thread ((t / tau_k) mod e_k) below_k}, at slot
 * {@code O_m + sum_reg c_k s_k}. x unravelled in P's shape is the element's coordinate; the thread takes part for
 * that slot when the coordinate lies in P's region (compared at run time, so run-time starts are fine). Every other
 * operand's coordinate is its start plus the offset in the region; a memory operand is addressed from its layout's
 * digits ({@link PlanAccesses#digitOperand}), a register operand must hold its region in the same slots on the same
 * threads (same layout, shape and region as P), else the op moves elements between threads and is declined. A
 * memory destination is stored by the threads whose replica digits of P are 0.
 */
final class CudaRegisterDigitsRule implements Rule {
    public static final CudaRegisterDigitsRule INSTANCE = new CudaRegisterDigitsRule();

    public String variant() {
        return "axe4j-cuda-register-digits";
    }

    public int priority() {
        return 2;
    }

    public CudaPlans.RegisterDigits plan(Request call) {
        long threads = CudaRules.requireCudaScope(call);
        if (call.scope().equals("thread")) {
            throw Declined.of("%s at thread scope: a register tile is the thread's own (axe4j-cuda-vector)",
                    call.op());
        }
        List<Operand> ops = ElementwiseLoops.checkedOperands(call);
        Operand part = null;
        RegisterTile tile = null;
        Map<String, PlanParts.CudaDigitOperand> memory = new LinkedHashMap<>();
        List<String> registers = new ArrayList<>();
        for (Operand o : ops) {
            String scope = call.storage(o.role());
            if (!call.swizzle(o.role()).isIdentity()) {
                throw Declined.of("%s: %s has a swizzled layout (%s); this rule addresses unswizzled layouts",
                        call.op(), o, call.swizzle(o.role()));
            }
            if (scope.equals("local")) {
                if (part == null) {
                    part = o;
                    tile = RegisterTile.of(call, whole(o), threads);
                    tile.requireCovered(call);
                } else {
                    requireSameSlots(call, part, o);
                }
                registers.add(o.role());
            } else if (scope.equals("global") || scope.startsWith("shared")) {
                AffineAccess.requireMemoryOnly(o);
                PlanParts.DigitOperand d = PlanAccesses.digitOperand(o);
                memory.put(o.role(), new PlanParts.CudaDigitOperand(d.base(), d.rowStrides(), d.iters(),
                        d.replicas(), Arrays.stream(o.loopDims()).boxed().toList()));
            } else {
                throw Declined.of("%s: %s lives in storage scope %s (global, shared or local only)", call.op(), o,
                        scope);
            }
        }
        if (part == null) {
            throw Declined.of("%s: no operand is a register (local) tile; axe4j-cuda-vector moves global and shared "
                    + "tiles", call.op());
        }
        List<List<Long>> registerDigits = new ArrayList<>();
        List<List<Long>> threadDigits = new ArrayList<>();
        long below = 1;
        List<Iter> shard = part.layout().shard();
        for (int k = shard.size() - 1; k >= 0; k--) {
            Iter it = shard.get(k);
            if (it.extent() > 1) {
                if (it.axis().equals(Axis.M)) {
                    registerDigits.add(0, List.of(it.extent(), it.stride(), below));
                } else {
                    long div = RegisterTile.position(call.op(), it.axis(), call.scope(), threads).div();
                    threadDigits.add(0, List.of(it.extent(), div * it.stride(), below));
                }
            }
            below *= it.extent();
        }
        List<List<Long>> writeOnce = new ArrayList<>();
        if (memory.containsKey("dst")) {
            for (RegisterTile.Digit d : tile.replicas) {
                writeOnce.add(List.of(d.tau(), d.count()));
            }
        }
        long slots = 1;
        for (List<Long> r : registerDigits) {
            slots *= r.get(0);
        }
        return new CudaPlans.RegisterDigits(threads, part.role(), Arrays.stream(part.shape()).boxed().toList(),
                Arrays.stream(part.loopDims()).boxed().toList(), tile.slotBase, tile.slots(), registerDigits,
                threadDigits, writeOnce, memory, registers, List.of("partition " + part.role() + " " + part.layout()
                + ": each thread visits its " + slots + " slot" + (slots == 1 ? "" : "s") + " over " + threads
                + " threads, one element per access, guarded by the region; memory addresses from the layouts' "
                + "digits" + (writeOnce.isEmpty() ? "" : ", one store per replicated element")));
    }

    /** The operand over its whole buffer at constant starts: the partition without the region. */
    private static Operand whole(Operand o) {
        return new Operand(o.role(), o.name(), o.dtype(), o.shape(), new long[o.shape().length], o.shape().clone(),
                o.layout(), o.elemOffset(), new org.axe4j.schedules.Modular[o.shape().length]);
    }

    /** Another register operand must hold each region element in the partition's slot on the partition's thread. */
    private static void requireSameSlots(Request call, Operand part, Operand o) {
        boolean same = o.layout().equals(part.layout()) && Arrays.equals(o.shape(), part.shape())
                && o.elemOffset() == part.elemOffset() && Arrays.equals(o.extent(), part.extent());
        for (int d = 0; same && d < o.shape().length; d++) {
            same = o.runTimeStarts()[d] == null && part.runTimeStarts()[d] == null && o.start()[d] == part.start()[d];
        }
        if (!same) {
            throw Declined.of("%s: %s and %s are register tiles that do not hold the region in the same slots of the "
                    + "same threads (same layout, shape and constant region needed); moving elements between threads "
                    + "needs shuffles or shared memory: copy %s to a shared tile, sync the scope, then copy that tile "
                    + "to %s", call.op(), o, part, call.operands().get(1).name(), call.operands().get(0).name());
        }
    }
}
