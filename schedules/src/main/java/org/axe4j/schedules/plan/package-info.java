/**
 * The plans that the dispatch rules hand to the Python emitters, one record per plan {@code kind}
 * ({@link org.axe4j.schedules.plan.SchedulePlan}), and their one JSON form: {@link PlanJson} writes a record with its
 * components in snake_case plus {@code "kind"} and {@code "schema"} ({@link PlanSchema#VERSION});
 * {@link PlanSchema} derives from the same components the schema that {@code python/axe4j/plan_schema.json} holds
 * and that {@code axe4j.plans} checks every plan against when it enters Python. {@link PlanValidator} is the same
 * check in Java.
 */
package org.axe4j.schedules.plan;
