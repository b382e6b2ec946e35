"""A loopback TCP proxy that a test can freeze.

Frozen, it accepts nothing, reads nothing and forwards nothing, yet keeps every
socket open: to its clients the server behind it looks stopped with SIGSTOP
(the kernel still completes new handshakes into the listen backlog, and data
sent is acknowledged but never answered). This silences the bed's shared
PostgreSQL for one test's clients only. Thawed, it forwards again what waited
in the sockets; a client that gave up meanwhile has its server side closed.
"""
import selectors
import socket
import threading


class FreezableProxy:
    def __init__(self, host, port):
        self.target = (host, port)
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(128)
        self.port = self.listener.getsockname()[1]
        self.frozen = threading.Event()
        self.stopping = threading.Event()
        self.peers = {}
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def freeze(self):
        self.frozen.set()

    def thaw(self):
        self.frozen.clear()

    def close(self):
        self.stopping.set()
        self.thread.join(timeout=5)
        for s in list(self.peers):
            s.close()
        self.listener.close()
        self.selector.close()

    def _drop(self, s):
        peer = self.peers.pop(s, None)
        for one in (s, peer):
            if one is not None:
                self.peers.pop(one, None)
                try:
                    self.selector.unregister(one)
                except (KeyError, ValueError):
                    pass
                one.close()

    def _accept(self):
        client, _ = self.listener.accept()
        try:
            server = socket.create_connection(self.target, timeout=5)
        except OSError:
            client.close()
            return
        self.peers[client], self.peers[server] = server, client
        for s in (client, server):
            self.selector.register(s, selectors.EVENT_READ)

    def _run(self):
        while not self.stopping.is_set():
            if self.frozen.is_set():
                self.stopping.wait(0.05)
                continue
            for key, _ in self.selector.select(timeout=0.1):
                s = key.fileobj
                if s is self.listener:
                    self._accept()
                    continue
                if s not in self.peers:
                    continue  # dropped with its peer in this round
                try:
                    data = s.recv(65536)
                    if data:
                        self.peers[s].sendall(data)
                except OSError:
                    data = b""
                if not data:
                    self._drop(s)
