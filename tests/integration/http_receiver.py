"""A local HTTP receiver for the HTTP sink tests: records every request and
answers from a script."""
import http.server
import json
import threading


class Receiver:
    """answer(body_text) -> status decides each reply; bodies of 2xx replies
    are kept as delivered."""

    def __init__(self, answer=lambda body: 200):
        self.answer = answer
        self.requests = []
        self.delivered = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length).decode()
                with receiver.lock:
                    status = receiver.answer(body)
                    receiver.requests.append((dict(self.headers), body, status))
                    if 200 <= status < 300:
                        receiver.delivered.extend(json.loads(body))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/ingest"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def values(self):
        with self.lock:
            return list(self.delivered)

    def close(self):
        self.server.shutdown()
        self.server.server_close()
