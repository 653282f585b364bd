package org.axe4j.mesh;

/**
 * The collectives a plan uses, each over the ranks of one sub-group of the mesh. In Axe terms (a step changes
 * which device iters of the layout are shard, replica, or partial):
 * <ul>
 *   <li>{@code ALL_GATHER}: device iters of the shard become replicas: every member sends its block to all.</li>
 *   <li>{@code REDUCE_SCATTER}: a partial replica becomes a shard iter: member k receives the sum of block k.</li>
 *   <li>{@code ALL_REDUCE}: a partial replica becomes a true replica: every member receives the whole sum.</li>
 *   <li>{@code ALL_TO_ALL}: device iters move between tensor dimensions (or any other exchange): member k sends
 *       to member j exactly the elements j needs and lacks.</li>
 *   <li>{@code BROADCAST}: an element set held by one member (a device offset, no device iter) is copied to the
 *       others.</li>
 *   <li>{@code IDLE}: this sub-group has nothing to move in this step.</li>
 * </ul>
 */
public enum Collective {
    ALL_GATHER, REDUCE_SCATTER, ALL_REDUCE, ALL_TO_ALL, BROADCAST, IDLE;

    /** The JSON spelling: {@code all_gather}, ... */
    public String json() {
        return name().toLowerCase();
    }
}
