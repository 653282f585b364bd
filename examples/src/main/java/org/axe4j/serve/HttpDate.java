package org.axe4j.serve;

import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/** The Date header's value (RFC 9110 5.6.7, IMF-fixdate), formatted once a second. */
final class HttpDate {
    private record Stamp(long second, String text) {}

    private static final DateTimeFormatter IMF_FIXDATE = DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'",
            Locale.ENGLISH);
    private static volatile Stamp last = new Stamp(-1, "");

    private HttpDate() {}

    static String now() {
        long second = System.currentTimeMillis() / 1000;
        Stamp s = last;
        if (s.second != second) {
            s = new Stamp(second, IMF_FIXDATE.format(
                    ZonedDateTime.ofInstant(java.time.Instant.ofEpochSecond(second), ZoneOffset.UTC)));
            last = s;
        }
        return s.text;
    }
}
