package org.axe4j.serve;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpPrincipal;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One request and its answer on a {@link Http1Connection}, as the JDK's {@link HttpExchange} API presents them, so
 * that a handler written for it runs unchanged. The body is read straight from the connection; {@code 100 Continue}
 * is sent when the handler first reads a body the client holds back for it (so a request refused on its head is
 * never uploaded); the answer's head goes out with {@link #sendResponseHeaders}, with the Content-Length (or chunked)
 * framing and a {@code Connection: close} when the connection ends after it.
 */
final class Exchange extends HttpExchange {
    /** A body the handler left unread is read and dropped, up to this many bytes, to keep the connection; past it, closed. */
    static final long DRAIN_LIMIT = 1 << 18;

    private static final byte[] CONTINUE = "HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    private final RequestHead head;
    private final OutputStream out;
    private final InetSocketAddress local;
    private final InetSocketAddress remote;
    private final Headers responseHeaders = new Headers();
    private final Map<String, Object> attributes = new HashMap<>(4);
    private final InputStream body;
    private boolean continueSent;
    private boolean keepAlive;
    private int status = -1;
    private ResponseBody answer;

    /** {@code keepAlive}: whether the connection may carry another request after this one (the server's say). */
    Exchange(RequestHead head, SocketInput in, OutputStream out, InetSocketAddress local, InetSocketAddress remote,
             boolean keepAlive) {
        this.head = head;
        this.out = out;
        this.local = local;
        this.remote = remote;
        this.keepAlive = keepAlive && head.keepAlive();
        Runnable sendContinue = this::sendContinue;
        if (head.chunked()) {
            body = new ChunkedBody(in, sendContinue);
        } else if (head.contentLength() > 0) {
            body = new FixedLengthBody(in, head.contentLength(), sendContinue);
        } else {
            body = InputStream.nullInputStream();
        }
    }

    private void sendContinue() {
        if (head.expectsContinue() && status < 0 && !continueSent) {
            continueSent = true;
            try {
                out.write(CONTINUE);
                out.flush();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** Whether the request's body has been read to its end. */
    private boolean bodyRead() {
        if (body instanceof FixedLengthBody fixed) {
            return fixed.finished();
        }
        return !(body instanceof ChunkedBody chunked) || chunked.finished();
    }

    /**
     * Whether what is left of the body can be read and dropped after the answer: not while the client waits for
     * {@code 100 Continue} (it may never send the body), not a chunked body (its length is unknown), and at most
     * {@link #DRAIN_LIMIT} bytes.
     */
    private boolean drainable() {
        if (bodyRead()) {
            return true;
        }
        if (head.expectsContinue() && !continueSent) {
            return false;
        }
        return body instanceof FixedLengthBody fixed && fixed.remaining() <= DRAIN_LIMIT;
    }

    @Override
    public void sendResponseHeaders(int code, long responseLength) throws IOException {
        if (status >= 0) {
            throw new IOException("the answer's head was already sent (status " + status + ")");
        }
        if (code < 200 || code > 999) {
            throw new IllegalArgumentException("status " + code + " is not a final status");
        }
        status = code;
        boolean noBody = head.method().equals("HEAD") || code == 204 || code == 304;
        ResponseBody.Framing framing;
        if (noBody || responseLength < 0) {
            framing = ResponseBody.Framing.NONE;
        } else if (responseLength > 0) {
            framing = ResponseBody.Framing.FIXED;
        } else if (head.protocol().equals("HTTP/1.1")) {
            framing = ResponseBody.Framing.CHUNKED;
        } else {
            framing = ResponseBody.Framing.UNTIL_CLOSE;
            keepAlive = false;
        }
        if (!drainable()) {
            keepAlive = false;
        }
        StringBuilder h = new StringBuilder(256);
        h.append("HTTP/1.1 ").append(code).append(' ').append(StatusText.of(code)).append("\r\nDate: ")
                .append(HttpDate.now()).append("\r\n");
        for (Map.Entry<String, List<String>> e : responseHeaders.entrySet()) {
            String name = e.getKey();
            if (name.equalsIgnoreCase("Content-Length") || name.equalsIgnoreCase("Transfer-Encoding")
                    || name.equalsIgnoreCase("Connection") || name.equalsIgnoreCase("Date")) {
                continue;  // the framing and the connection are this class's to say
            }
            for (String value : e.getValue()) {
                h.append(name).append(": ").append(value).append("\r\n");
            }
        }
        if (framing == ResponseBody.Framing.FIXED || (framing == ResponseBody.Framing.NONE && code != 204
                && code != 304)) {
            h.append("Content-Length: ").append(Math.max(responseLength, 0)).append("\r\n");
        } else if (framing == ResponseBody.Framing.CHUNKED) {
            h.append("Transfer-Encoding: chunked\r\n");
        }
        if (!keepAlive) {
            h.append("Connection: close\r\n");
        } else if (!head.protocol().equals("HTTP/1.1")) {
            h.append("Connection: keep-alive\r\n");
        }
        h.append("\r\n");
        out.write(h.toString().getBytes(StandardCharsets.ISO_8859_1));
        answer = new ResponseBody(out, framing, framing == ResponseBody.Framing.FIXED ? responseLength : 0);
        if (framing == ResponseBody.Framing.NONE) {
            answer.close();
        }
    }

    /**
     * Ends the exchange after the handler returned: the answer closed and sent, what is left of the body read and
     * dropped. Whether the connection can carry another request.
     */
    boolean finish() throws IOException {
        if (answer == null) {
            return false;  // the handler answered nothing: the client learns it from the connection closing
        }
        answer.close();
        if (!keepAlive || !answer.complete()) {
            return false;
        }
        if (!bodyRead()) {
            byte[] skip = new byte[8192];
            while (body.read(skip, 0, skip.length) >= 0) {
                // dropped: the handler did not need it
            }
        }
        return true;
    }

    @Override
    public Headers getRequestHeaders() {
        return head.headers();
    }

    @Override
    public Headers getResponseHeaders() {
        return responseHeaders;
    }

    @Override
    public URI getRequestURI() {
        return head.uri();
    }

    @Override
    public String getRequestMethod() {
        return head.method();
    }

    /** No contexts here: one handler answers every path. */
    @Override
    public HttpContext getHttpContext() {
        throw new UnsupportedOperationException("one handler answers every path; there are no contexts");
    }

    /** Closes the body streams; the connection itself is ended (or kept) by {@link #finish}. */
    @Override
    public void close() {
        try {
            if (answer != null) {
                answer.close();
            }
        } catch (IOException ignored) {
            // the client is gone or the answer was short: finish() closes the connection
        }
    }

    @Override
    public InputStream getRequestBody() {
        return body;
    }

    @Override
    public OutputStream getResponseBody() {
        if (answer == null) {
            return new OutputStream() {  // before the head: the JDK's API allows taking the stream first
                @Override
                public void write(int b) throws IOException {
                    write(new byte[] {(byte) b}, 0, 1);
                }

                @Override
                public void write(byte[] b, int off, int len) throws IOException {
                    if (answer == null) {
                        throw new IOException("the answer's head is not sent yet");
                    }
                    answer.write(b, off, len);
                }

                @Override
                public void close() throws IOException {
                    if (answer != null) {
                        answer.close();
                    }
                }
            };
        }
        return answer;
    }

    @Override
    public InetSocketAddress getRemoteAddress() {
        return remote;
    }

    @Override
    public int getResponseCode() {
        return status;
    }

    @Override
    public InetSocketAddress getLocalAddress() {
        return local;
    }

    @Override
    public String getProtocol() {
        return head.protocol();
    }

    @Override
    public Object getAttribute(String name) {
        return attributes.get(name);
    }

    @Override
    public void setAttribute(String name, Object value) {
        attributes.put(name, value);
    }

    @Override
    public void setStreams(InputStream i, OutputStream o) {
        throw new UnsupportedOperationException("the request's and answer's streams are the connection's");
    }

    @Override
    public HttpPrincipal getPrincipal() {
        return null;
    }
}
