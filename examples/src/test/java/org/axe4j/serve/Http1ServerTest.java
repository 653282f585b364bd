package org.axe4j.serve;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The service's HTTP/1.1 server against a small handler, over raw sockets, each answer checked byte for byte (the
 * Date header's value checked for its form, then left out): 100-continue sent only when the body is read, chunked
 * bodies, pipelined requests, HTTP/1.0, Connection: close, HEAD, chunked answers, bodies left unread, and the
 * refusals of heads it cannot take (400, 408, 414, 431, 501, 505, 503 past the connection limit).
 */
final class Http1ServerTest {
    static Http1Server server;
    static final List<HttpError> REFUSED = new CopyOnWriteArrayList<>();

    /** Echoes "METHOD PATH PROTOCOL n: BODY"; /refuse answers 413 unread, /ignore 200 unread, /pieces chunked. */
    static void echo(HttpExchange x) throws IOException {
        String path = x.getRequestURI().getPath();
        byte[] answer;
        if (path.equals("/refuse") || path.equals("/ignore")) {
            answer = (path.equals("/refuse") ? "refused" : "ignored").getBytes(StandardCharsets.US_ASCII);
            x.getResponseHeaders().set("Content-Type", "text/plain");
            x.sendResponseHeaders(path.equals("/refuse") ? 413 : 200, answer.length);
            x.getResponseBody().write(answer);
            x.getResponseBody().close();
            return;
        }
        byte[] body = x.getRequestBody().readAllBytes();
        if (path.equals("/pieces")) {
            x.sendResponseHeaders(200, 0);  // length unknown: chunked (HTTP/1.1) or until close (HTTP/1.0)
            OutputStream out = x.getResponseBody();
            out.write("ab".getBytes(StandardCharsets.US_ASCII));
            out.write("cde".getBytes(StandardCharsets.US_ASCII));
            out.close();
            return;
        }
        answer = (x.getRequestMethod() + " " + path + " " + x.getProtocol() + " " + body.length + ": "
                + new String(body, StandardCharsets.ISO_8859_1)).getBytes(StandardCharsets.ISO_8859_1);
        x.getResponseHeaders().set("Content-Type", "text/plain");
        x.sendResponseHeaders(200, answer.length);
        x.getResponseBody().write(answer);
        x.getResponseBody().close();
    }

    @BeforeAll
    static void start() throws IOException {
        server = new Http1Server(new InetSocketAddress("127.0.0.1", 0), Http1ServerTest::echo, REFUSED::add, 1_000,
                300, 64);
        server.start();
    }

    @AfterAll
    static void stop() {
        server.stop();
    }

    static Socket connect(Http1Server s) throws IOException {
        Socket socket = new Socket("127.0.0.1", s.port());
        socket.setSoTimeout(5_000);
        return socket;
    }

    static void send(Socket s, String text) throws IOException {
        s.getOutputStream().write(text.getBytes(StandardCharsets.ISO_8859_1));
        s.getOutputStream().flush();
    }

    static String line(InputStream in) throws IOException {
        StringBuilder text = new StringBuilder();
        for (int c; (c = in.read()) != '\n'; ) {
            if (c < 0) {
                throw new IOException("closed after '" + text + "'");
            }
            text.append((char) c);
        }
        return text.append('\n').toString();
    }

    /**
     * One answer as its exact bytes, the Date header left out (its value checked first); the body by Content-Length,
     * by chunks (kept as sent), or until the close.
     */
    static String answer(InputStream in) throws IOException {
        return answer(in, true);
    }

    /** {@code withBody} false: the head only (the answer to HEAD, whose Content-Length says what GET would send). */
    static String answer(InputStream in, boolean withBody) throws IOException {
        StringBuilder all = new StringBuilder();
        long length = -1;
        boolean chunked = false;
        for (String l; !(l = line(in)).equals("\r\n"); ) {
            if (l.startsWith("Date: ")) {
                assertTrue(l.matches("Date: (Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{2} [A-Z][a-z]{2} [0-9]{4} "
                        + "[0-9]{2}:[0-9]{2}:[0-9]{2} GMT\r\n"), l);
                continue;
            }
            all.append(l);
            if (l.startsWith("Content-Length: ")) {
                length = Long.parseLong(l.substring(16).trim());
            }
            chunked |= l.equals("Transfer-Encoding: chunked\r\n");
        }
        all.append("\r\n");
        if (!withBody) {
            return all.toString();
        }
        if (chunked) {
            for (String size; !(size = line(in)).equals("0\r\n"); ) {
                all.append(size).append(new String(in.readNBytes(Integer.parseInt(size.trim(), 16) + 2),
                        StandardCharsets.ISO_8859_1));
            }
            all.append("0\r\n").append(line(in));
        } else {
            byte[] body = length >= 0 ? in.readNBytes((int) length) : in.readAllBytes();
            all.append(new String(body, StandardCharsets.ISO_8859_1));
        }
        return all.toString();
    }

    static String ok(String body) {
        return "HTTP/1.1 200 OK\r\nContent-type: text/plain\r\nContent-Length: " + body.length() + "\r\n\r\n" + body;
    }

    static void assertClosed(Socket s) throws IOException {
        assertEquals(-1, s.getInputStream().read(), "the server closed the connection");
    }

    @Test
    void pipelinedRequestsOnOneConnectionAreAnsweredInOrder() throws IOException {
        try (Socket s = connect(server)) {
            send(s, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
                    + "\r\n"  // a stray blank line between requests is allowed (RFC 9112 2.2)
                    + "PUT /c?q=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
            InputStream in = s.getInputStream();
            assertEquals(ok("GET /a HTTP/1.1 0: "), answer(in));
            assertEquals(ok("POST /b HTTP/1.1 5: hello"), answer(in));
            assertEquals(ok("PUT /c HTTP/1.1 0: "), answer(in));
            send(s, "GET /d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            assertEquals("HTTP/1.1 200 OK\r\nContent-type: text/plain\r\nContent-Length: 19\r\nConnection: close\r\n"
                    + "\r\nGET /d HTTP/1.1 0: ", answer(in));
            assertClosed(s);
        }
    }

    @Test
    void expectContinueIsAnsweredWhenTheBodyIsReadAndNotWhenTheHeadIsRefused() throws IOException {
        try (Socket s = connect(server)) {
            send(s, "POST /e HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n");
            InputStream in = s.getInputStream();
            assertEquals("HTTP/1.1 100 Continue\r\n", line(in));
            assertEquals("\r\n", line(in));
            send(s, "data");
            assertEquals(ok("POST /e HTTP/1.1 4: data"), answer(in));
            // a handler that answers without reading: no 100, and the connection closes (the client may never send)
            send(s, "POST /refuse HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n");
            assertEquals("HTTP/1.1 413 Content Too Large\r\nContent-type: text/plain\r\nContent-Length: 7\r\n"
                    + "Connection: close\r\n\r\nrefused", answer(in));
            assertClosed(s);
        }
    }

    @Test
    void aChunkedBodyIsReadWithItsExtensionsAndTrailersAndABrokenOneIs400() throws IOException {
        try (Socket s = connect(server)) {
            send(s, "POST /k HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "5\r\nhello\r\n6;name=value\r\n world\r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n");
            InputStream in = s.getInputStream();
            assertEquals(ok("POST /k HTTP/1.1 21: hello world0123456789"), answer(in));
            send(s, "POST /k HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n");
            String refused = answer(in);
            assertTrue(refused.startsWith("HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"), refused);
            assertTrue(refused.contains("Connection: close\r\n") && refused.contains("the chunk size 'zz' is not a "
                    + "hexadecimal number"), refused);
            assertClosed(s);
        }
    }

    @Test
    void http10ClosesUnlessAskedToKeepAliveAndGetsNoChunks() throws IOException {
        try (Socket s = connect(server)) {
            send(s, "GET /p HTTP/1.0\r\n\r\n");
            assertEquals("HTTP/1.1 200 OK\r\nContent-type: text/plain\r\nContent-Length: 19\r\nConnection: close\r\n"
                    + "\r\nGET /p HTTP/1.0 0: ", answer(s.getInputStream()));
            assertClosed(s);
        }
        try (Socket s = connect(server)) {
            send(s, "POST /q HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nhi");
            InputStream in = s.getInputStream();
            assertEquals("HTTP/1.1 200 OK\r\nContent-type: text/plain\r\nContent-Length: 22\r\n"
                    + "Connection: keep-alive\r\n\r\nPOST /q HTTP/1.0 2: hi", answer(in));
            send(s, "GET /pieces HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");  // length unknown: until the close
            assertEquals("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nabcde", answer(in));
        }
    }

    @Test
    void anAnswerOfUnknownLengthIsChunkedAndHeadGetsNoBody() throws IOException {
        try (Socket s = connect(server)) {
            send(s, "GET /pieces HTTP/1.1\r\nHost: x\r\n\r\nHEAD /h HTTP/1.1\r\nHost: x\r\n\r\nGET /z HTTP/1.1\r\n\r\n");
            InputStream in = s.getInputStream();
            assertEquals("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n3\r\ncde\r\n0\r\n\r\n",
                    answer(in));
            // the length GET would have had ("HEAD /h HTTP/1.1 0: "), and no body: the next answer follows at once
            assertEquals("HTTP/1.1 200 OK\r\nContent-type: text/plain\r\nContent-Length: 20\r\n\r\n",
                    answer(in, false));
            assertEquals(ok("GET /z HTTP/1.1 0: "), answer(in));
        }
    }

    @Test
    void aBodyLeftUnreadIsDroppedAndTheConnectionGoesOn() throws IOException {
        try (Socket s = connect(server)) {
            String big = "x".repeat(100_000);
            send(s, "POST /ignore HTTP/1.1\r\nHost: x\r\nContent-Length: " + big.length() + "\r\n\r\n" + big
                    + "GET /after HTTP/1.1\r\nHost: x\r\n\r\n");
            InputStream in = s.getInputStream();
            assertEquals(ok("ignored"), answer(in));
            assertEquals(ok("GET /after HTTP/1.1 0: "), answer(in));
        }
    }

    /** Sends a request the server refuses before its handler; the answer's status line, and the connection closed. */
    static String refusedWith(String request) throws IOException {
        try (Socket s = connect(server)) {
            send(s, request);
            String a = answer(s.getInputStream());
            assertTrue(a.contains("\r\nContent-Type: application/json\r\n") && a.contains("Connection: close\r\n"), a);
            assertClosed(s);
            return a.substring(0, a.indexOf("\r\n")) + " | " + a.substring(a.indexOf("\r\n\r\n") + 4);
        }
    }

    @Test
    void headsBeyondTheLimitsOrTheProtocolAreRefusedWithTheirStatus() throws IOException {
        int before = REFUSED.size();
        String a = refusedWith("GET /" + "a".repeat(RequestHead.MAX_LINE) + " HTTP/1.1\r\n\r\n");
        assertTrue(a.startsWith("HTTP/1.1 414 URI Too Long | ") && a.contains("longer than 8192 bytes"), a);
        a = refusedWith("GET / HTTP/1.1\r\nX-Big: " + "b".repeat(RequestHead.MAX_HEADER_BYTES) + "\r\n\r\n");
        assertTrue(a.startsWith("HTTP/1.1 431 Request Header Fields Too Large | "), a);
        a = refusedWith("GET / HTTP/1.1\r\n" + "X-Many: 1\r\n".repeat(RequestHead.MAX_HEADERS + 1) + "\r\n");
        assertTrue(a.startsWith("HTTP/1.1 431 Request Header Fields Too Large | "), a);
        a = refusedWith("\u0000\u0001 garbage \r\n\r\n");
        assertTrue(a.startsWith("HTTP/1.1 400 Bad Request | ") && a.contains("is not METHOD TARGET HTTP/1.1"), a);
        a = refusedWith("GET / HTTP/2.0\r\n\r\n");
        assertTrue(a.startsWith("HTTP/1.1 505 HTTP Version Not Supported | "), a);
        a = refusedWith("GET / HTTP/1.1\r\n folded: no\r\n\r\n");
        assertTrue(a.startsWith("HTTP/1.1 400 Bad Request | ") && a.contains("is not NAME: VALUE"), a);
        a = refusedWith("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n");
        assertTrue(a.startsWith("HTTP/1.1 501 Not Implemented | ") && a.contains("'gzip' is not served"), a);
        a = refusedWith("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc");
        assertTrue(a.startsWith("HTTP/1.1 400 Bad Request | ") && a.contains("both Transfer-Encoding and"), a);
        a = refusedWith("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd");
        assertTrue(a.startsWith("HTTP/1.1 400 Bad Request | ") && a.contains("given as both 3 and 4"), a);
        a = refusedWith("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n");
        assertTrue(a.startsWith("HTTP/1.1 400 Bad Request | ") && a.contains("'-1' is not a whole number"), a);
        a = refusedWith("GET / HTTP/1.1\r\nHost: x\r\n");  // the head stops: 408 after the read timeout (300 ms)
        assertTrue(a.startsWith("HTTP/1.1 408 Request Timeout | ") && a.contains("within 300 ms"), a);
        assertEquals(11, REFUSED.size() - before, "each refusal is reported for the metrics");
    }

    @Test
    void anIdleConnectionIsClosedAfterTheIdleTimeoutAndAStalledBodyAfterTheReadTimeout() throws IOException {
        try (Socket s = connect(server)) {
            send(s, "GET /i HTTP/1.1\r\n\r\n");
            assertEquals(ok("GET /i HTTP/1.1 0: "), answer(s.getInputStream()));
            long t0 = System.nanoTime();
            assertClosed(s);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms >= 800 && ms < 4_000, "closed after " + ms + " ms idle (the idle timeout: 1000 ms)");
        }
        try (Socket s = connect(server)) {
            send(s, "POST /j HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc");
            assertClosed(s);  // no answer: the handler's read failed, as if the client had gone
        }
    }

    @Test
    void pastTheConnectionLimitANewConnectionIsAnswered503() throws Exception {
        Http1Server one = new Http1Server(new InetSocketAddress("127.0.0.1", 0), Http1ServerTest::echo, e -> { },
                5_000, 5_000, 1);
        one.start();
        try (Socket first = connect(one); Socket second = connect(one)) {
            send(first, "GET /1 HTTP/1.1\r\n\r\n");
            assertEquals(ok("GET /1 HTTP/1.1 0: "), answer(first.getInputStream()));
            String refused = answer(second.getInputStream());
            assertTrue(refused.startsWith("HTTP/1.1 503 Service Unavailable\r\n") && refused.contains(
                    "more than 1 open connections"), refused);
        } finally {
            one.stop();
        }
        int port = one.port();
        assertThrows(java.net.ConnectException.class, () -> new Socket("127.0.0.1", port).close(),
                "the port is closed after stop()");
    }
}
