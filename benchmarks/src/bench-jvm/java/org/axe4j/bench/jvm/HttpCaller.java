package org.axe4j.bench.jvm;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * One keep-alive HTTP/1.1 connection to a service, sending the same binary request each {@link #call} and reading
 * the whole answer (Nagle off). A status other than 200 is an error naming the service's answer.
 */
final class HttpCaller implements AutoCloseable {
    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;
    private final byte[] request;
    private byte[] answer = new byte[0];

    HttpCaller(int port, String path, byte[] body) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setTcpNoDelay(true);
        out = socket.getOutputStream();
        in = new BufferedInputStream(socket.getInputStream(), 1 << 16);
        byte[] head = ("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
                + "Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        request = new byte[head.length + body.length];
        System.arraycopy(head, 0, request, 0, head.length);
        System.arraycopy(body, 0, request, head.length, body.length);
    }

    /** Sends the request and reads the answer's body (kept in {@link #answer}). */
    void call() throws IOException {
        out.write(request);
        out.flush();
        String status = line();
        int length = -1;
        for (String h = line(); !h.isEmpty(); h = line()) {
            int colon = h.indexOf(':');
            if (colon > 0 && h.substring(0, colon).trim().equalsIgnoreCase("content-length")) {
                length = Integer.parseInt(h.substring(colon + 1).trim());
            }
        }
        if (length < 0) {
            throw new IOException("answer without Content-Length: " + status);
        }
        if (answer.length != length) {
            answer = new byte[length];
        }
        for (int read = 0; read < length; ) {
            int n = in.read(answer, read, length - read);
            if (n < 0) {
                throw new IOException("connection closed mid-answer");
            }
            read += n;
        }
        if (!status.startsWith("HTTP/1.1 200")) {
            throw new IOException(status + ": " + new String(answer, StandardCharsets.UTF_8));
        }
    }

    byte[] answer() {
        return answer;
    }

    private String line() throws IOException {
        StringBuilder s = new StringBuilder();
        for (int c = in.read(); c != '\n'; c = in.read()) {
            if (c < 0) {
                throw new IOException("connection closed");
            }
            if (c != '\r') {
                s.append((char) c);
            }
        }
        return s.toString();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
