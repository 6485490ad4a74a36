"""`openai_server`: an OpenAI-compatible chat server on 127.0.0.1 (a free port, a thread) for tests
that need the real litellm path end to end: every request gets the same reply, plain or streamed.

    def test_x(openai_server):
        openai_server.reply = "```cpp\\n...\\n```"
        ...  # a model entry with api_base=openai_server.api_base
        assert openai_server.requests[0]["messages"][0]["role"] == "system"
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


class FakeOpenAIServer:
    def __init__(self) -> None:
        self.reply = "no kernel here"
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                server.requests.append(req)
                usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
                if req.get("stream"):
                    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "fake",
                             "choices": [{"index": 0, "delta": {"content": server.reply}, "finish_reason": "stop"}],
                             "usage": usage}
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode())
                    return
                body = json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "fake",
                                   "choices": [{"index": 0, "finish_reason": "stop",
                                                "message": {"role": "assistant", "content": server.reply}}],
                                   "usage": usage}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.api_base = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def openai_server():
    server = FakeOpenAIServer()
    yield server
    server.stop()
