package org.axe4j.schedules;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the run-time starts add to an operand's address: {@code strides} (start s_d adds {@code s_d * stride})
 * for a dim walked by one stride from its start, else {@code terms}, per dim a list of [divisor, modulus,
 * stride]: {@code (floor(s_d / divisor) mod modulus) * stride} each, modulus 0 for none; {@code terms} is null
 * when every dim has a stride.
 */
public record RunTimeStarts(Map<String, Long> strides, Map<String, List<List<Long>>> terms) {
    public static RunTimeStarts of(AffineAccess access) {
        Map<String, Long> strides = new LinkedHashMap<>();
        Map<String, List<List<Long>>> terms = new LinkedHashMap<>();
        access.startTerms().forEach((d, list) -> {
            if (list.size() == 1 && list.get(0).divisor() == 1 && list.get(0).modulus() == 0) {
                strides.put(Integer.toString(d), list.get(0).stride());
            } else {
                terms.put(Integer.toString(d), list.stream()
                        .map(t -> List.of(t.divisor(), t.modulus(), t.stride())).toList());
            }
        });
        return new RunTimeStarts(strides, terms.isEmpty() ? null : terms);
    }
}
