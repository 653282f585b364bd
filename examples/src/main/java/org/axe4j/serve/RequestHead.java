package org.axe4j.serve;

import com.sun.net.httpserver.Headers;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;
import java.util.Locale;

/**
 * A request's line and headers, as read from a connection with bounded sizes, and what they say about its body and
 * the connection: the body's length (-1: chunked), whether the client waits for {@code 100 Continue}, and whether the
 * connection stays open after the answer.
 */
record RequestHead(String method, URI uri, String protocol, Headers headers, long contentLength, boolean chunked,
                   boolean expectsContinue, boolean keepAlive) {
    /** The longest request line, and the most bytes and lines of headers (RFC 9110 leaves the limits to servers). */
    static final int MAX_LINE = 8192;
    static final int MAX_HEADER_BYTES = 16384;
    static final int MAX_HEADERS = 100;

    /**
     * The next request's head, or null when the client closed the connection (or sent only blank lines) before a
     * request started.
     *
     * @throws HttpError 400 for a malformed line or header, 414/431 past the limits, 501 for a transfer coding other
     *     than chunked, 505 for a protocol other than HTTP/1.x
     */
    static RequestHead read(SocketInput in) throws IOException, HttpError {
        String line;
        try {
            do {  // RFC 9112 2.2: blank lines before a request line are ignored
                line = in.line(MAX_LINE);
                if (line == null) {
                    return null;
                }
            } while (line.isEmpty());
        } catch (SocketInput.LineTooLong e) {
            throw new HttpError(414, "bad_request", "the request line is longer than " + MAX_LINE + " bytes");
        }
        int firstSpace = line.indexOf(' ');
        int lastSpace = line.lastIndexOf(' ');
        if (firstSpace <= 0 || lastSpace == firstSpace) {
            throw new HttpError(400, "bad_request", "the request line '" + Tensors.clip(line)
                    + "' is not METHOD TARGET HTTP/1.1");
        }
        String method = line.substring(0, firstSpace);
        String target = line.substring(firstSpace + 1, lastSpace);
        String protocol = line.substring(lastSpace + 1);
        if (!isToken(method) || target.isEmpty() || target.indexOf(' ') >= 0) {
            throw new HttpError(400, "bad_request", "the request line '" + Tensors.clip(line)
                    + "' is not METHOD TARGET HTTP/1.1");
        }
        boolean http11;
        if (protocol.equals("HTTP/1.1")) {
            http11 = true;
        } else if (protocol.equals("HTTP/1.0")) {
            http11 = false;
        } else if (protocol.matches("HTTP/[0-9]\\.[0-9]")) {
            throw new HttpError(505, "bad_request", "protocol " + protocol + " is not served; use HTTP/1.1 or 1.0");
        } else {
            throw new HttpError(400, "bad_request", "the request line '" + Tensors.clip(line)
                    + "' does not end in HTTP/1.1");
        }
        URI uri;
        try {
            uri = new URI(target);
        } catch (URISyntaxException e) {
            throw new HttpError(400, "bad_request", "the request target '" + Tensors.clip(target)
                    + "' is not a URI: " + e.getReason());
        }
        Headers headers = new Headers();
        int bytes = 0;
        int count = 0;
        while (true) {
            String header;
            try {
                header = in.line(MAX_HEADER_BYTES - bytes);
            } catch (SocketInput.LineTooLong e) {
                throw headersTooLarge();
            }
            if (header == null) {
                throw new java.io.EOFException("the connection closed inside the request's head");
            }
            if (header.isEmpty()) {
                break;
            }
            bytes += header.length() + 2;
            if (++count > MAX_HEADERS || bytes > MAX_HEADER_BYTES) {
                throw headersTooLarge();
            }
            int colon = header.indexOf(':');
            // no folded lines (RFC 9112 5.2), no space before the colon (5.1)
            if (colon <= 0 || !isToken(header.substring(0, colon))) {
                throw new HttpError(400, "bad_request", "the header line '" + Tensors.clip(header)
                        + "' is not NAME: VALUE");
            }
            String value = header.substring(colon + 1).strip();
            if (value.indexOf('\r') >= 0 || value.indexOf('\0') >= 0) {
                throw new HttpError(400, "bad_request", "header " + Tensors.clip(header.substring(0, colon))
                        + " holds a CR or NUL");
            }
            headers.add(header.substring(0, colon), value);
        }
        return of(method, uri, protocol, headers, http11);
    }

    private static RequestHead of(String method, URI uri, String protocol, Headers headers, boolean http11)
            throws HttpError {
        List<String> codings = headers.get("Transfer-Encoding");
        List<String> lengths = headers.get("Content-Length");
        boolean chunked = false;
        if (codings != null) {
            String coding = String.join(",", codings).strip().toLowerCase(Locale.ROOT);
            if (!coding.equals("chunked")) {
                throw new HttpError(501, "bad_request", "Transfer-Encoding '" + Tensors.clip(coding)
                        + "' is not served; send the body with Content-Length or Transfer-Encoding: chunked");
            }
            if (lengths != null) {  // RFC 9112 6.3: both is a sign of request smuggling
                throw new HttpError(400, "bad_request", "the request has both Transfer-Encoding and Content-Length");
            }
            chunked = true;
        }
        long length = 0;
        if (chunked) {
            length = -1;
        } else if (lengths != null) {
            String first = lengths.get(0).strip();
            for (String other : lengths) {
                for (String part : other.split(",")) {
                    if (!part.strip().equals(first)) {
                        throw new HttpError(400, "bad_request", "Content-Length is given as both "
                                + Tensors.clip(first) + " and " + Tensors.clip(part.strip()));
                    }
                }
            }
            if (!first.matches("[0-9]{1,18}")) {
                throw new HttpError(400, "bad_request", "Content-Length '" + Tensors.clip(first)
                        + "' is not a whole number of bytes");
            }
            length = Long.parseLong(first);
        }
        boolean close = false;
        boolean keepAliveAsked = false;
        List<String> connection = headers.get("Connection");
        if (connection != null) {
            for (String value : connection) {
                for (String option : value.split(",")) {
                    String o = option.strip().toLowerCase(Locale.ROOT);
                    close |= o.equals("close");
                    keepAliveAsked |= o.equals("keep-alive");
                }
            }
        }
        String expect = headers.getFirst("Expect");
        boolean expectsContinue = http11 && expect != null && expect.strip().equalsIgnoreCase("100-continue");
        return new RequestHead(method, uri, protocol, headers, length, chunked, expectsContinue,
                !close && (http11 || keepAliveAsked));
    }

    private static HttpError headersTooLarge() {
        return new HttpError(431, "bad_request", "the request's headers are larger than " + MAX_HEADER_BYTES
                + " bytes or more than " + MAX_HEADERS + " lines");
    }

    /** RFC 9110 5.6.2: a token is one or more of these visible characters. */
    static boolean isToken(String s) {
        if (s.isEmpty()) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /** Whether the request has a body to read (chunked, or a positive Content-Length). */
    boolean hasBody() {
        return chunked || contentLength > 0;
    }
}
