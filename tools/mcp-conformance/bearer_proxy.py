"""A loopback proxy that adds `Authorization: Bearer <token>` to every request and forwards it to
one upstream port, Host and Origin untouched.

The conformance suite has no option to send a header, and /api/v1/mcp answers nothing without a
token: through this proxy its scenarios reach that path as a client configured with a personal
token would. A JSON answer is passed on whole; an event stream (subscriptions/listen) is passed
on as it arrives, chunk by chunk, until either side closes it.

Usage: bearer_proxy.py LISTEN_PORT UPSTREAM_PORT TOKEN (run by tools/mcp-conformance/run).
"""

import http.client
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "authorization"}


class Forward(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    upstream_port = 0
    token = ""

    def forward(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        headers["Authorization"] = f"Bearer {self.token}"
        upstream = http.client.HTTPConnection("127.0.0.1", self.upstream_port, timeout=70)
        try:
            # A Host in `headers` is sent as it is: the server's DNS-rebinding check sees it.
            upstream.request(self.command, self.path, body=body, headers=headers)
            answer = upstream.getresponse()
            self.send_response_only(answer.status, answer.reason)
            for name, value in answer.getheaders():
                if name.lower() not in HOP_BY_HOP:
                    self.send_header(name, value)
            if answer.getheader("content-type", "").startswith("text/event-stream"):
                self.stream(answer)
            else:
                data = answer.read()
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
        finally:
            upstream.close()

    def stream(self, answer: http.client.HTTPResponse) -> None:
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            while chunk := answer.read1(65536):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except (ConnectionError, TimeoutError):
            self.close_connection = True  # the client left, or the stream went quiet past 70 s

    do_GET = do_POST = do_DELETE = do_PUT = do_OPTIONS = forward

    def log_message(self, format, *args) -> None:
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a client that closed its keep-alive connection between requests
        super().handle_error(request, client_address)


def main() -> None:
    listen_port, upstream_port, token = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    Forward.upstream_port = upstream_port
    Forward.token = token
    Server(("127.0.0.1", listen_port), Forward).serve_forever()


if __name__ == "__main__":
    main()
