"""moto's S3 server on a free loopback port for the S3 sink's tests, with
signature checks on, and a small proxy in front of it that refuses as a
bucket under load or misconfigured does.

moto checks signatures (and IAM policies) once INITIAL_NO_AUTH_ACTION_COUNT
requests were served: the first three make the IAM user, its access key
and its policy; every request after them must be signed with that key.
Credentials are made at test time, never kept in the repository.
"""
import json
import os
import socket
import struct
import subprocess
import sys
import threading

import boto3
import requests

import secret_scan
from worker import free_port, wait_for

REGION = "us-east-1"


class MotoS3:
    def __init__(self, directory):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        server = os.path.join(os.path.dirname(sys.executable), "moto_server")
        env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "3"}
        self.log_path = os.path.join(directory, "moto.log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen([server, "-H", "127.0.0.1", "-p", str(self.port)],
                                     env=env, stdout=self.log, stderr=subprocess.STDOUT)
        wait_for(self._ready, timeout=60, interval=0.1, what="moto's S3 server")
        iam = boto3.client("iam", endpoint_url=self.url, region_name=REGION,
                           aws_access_key_id="setup", aws_secret_access_key="setup")
        iam.create_user(UserName="sink")
        key = iam.create_access_key(UserName="sink")["AccessKey"]
        iam.put_user_policy(UserName="sink", PolicyName="s3", PolicyDocument=json.dumps({
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
        self.access_key = key["AccessKeyId"]
        self.secret_key = key["SecretAccessKey"]
        secret_scan.remember(self.secret_key)
        self.s3 = boto3.client("s3", endpoint_url=self.url, region_name=REGION,
                               aws_access_key_id=self.access_key,
                               aws_secret_access_key=self.secret_key)

    def _ready(self):
        assert self.proc.poll() is None, f"moto_server exited:\n{self.logs()}"
        return requests.get(self.url + "/moto-api/", timeout=2).status_code == 200

    def logs(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def unchecked(self, count):
        """Lets the next count actions through without a signature check:
        moto checks AssumeRoleWithWebIdentity's too, which AWS does not sign."""
        reply = requests.post(self.url + "/moto-api/reset-auth", data=str(count), timeout=10)
        assert reply.status_code == 200, reply.text

    def web_identity_role(self, name):
        """A role allowed every S3 action, for AssumeRoleWithWebIdentity; its ARN."""
        self.unchecked(2)
        iam = boto3.client("iam", endpoint_url=self.url, region_name=REGION,
                           aws_access_key_id="setup", aws_secret_access_key="setup")
        arn = iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps({
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Principal": {"Federated": "oidc"},
                           "Action": "sts:AssumeRoleWithWebIdentity"}]}))["Role"]["Arn"]
        iam.put_role_policy(RoleName=name, PolicyName="s3", PolicyDocument=json.dumps({
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
        return arn

    def bucket(self, name):
        self.s3.create_bucket(Bucket=name)
        return name

    def keys(self, bucket, prefix=""):
        keys = []
        for page in self.s3.get_paginator("list_objects_v2").paginate(Bucket=bucket,
                                                                      Prefix=prefix):
            keys.extend(o["Key"] for o in page.get("Contents", []))
        return keys

    def read(self, bucket, key):
        return self.s3.get_object(Bucket=bucket, Key=key)["Body"].read()

    def multipart_uploads(self, bucket):
        return self.s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=20)
        self.log.close()


class RefusingProxy:
    """A loopback HTTP proxy to moto that answers the requests refuse(method,
    path) picks with a refusal instead of forwarding them: ("status", code,
    s3_error_code) or ("reset",) to close the connection without an answer.
    Every request is served on its own connection (Connection: close)."""

    def __init__(self, upstream_port, refuse):
        self.upstream_port = upstream_port
        self.refuse = refuse
        self.lock = threading.Lock()
        self.seen = []  # (method, path, what happened)
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.stopping = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stopping:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    @staticmethod
    def _read_request(conn):
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(rest) < length:
            chunk = conn.recv(min(1 << 20, length - len(rest)))
            if not chunk:
                return None
            rest += chunk
        return head, rest

    def _handle(self, conn):
        conn.settimeout(30)
        try:
            request = self._read_request(conn)
            if request is None:
                return
            head, body = request
            method, path = head.split(b" ")[:2]
            method, path = method.decode(), path.decode()
            verdict = self.refuse(method, path)
            with self.lock:
                self.seen.append((method, path, verdict[0] if verdict else "forwarded"))
            if verdict and verdict[0] == "reset":
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return
            if verdict:
                code, error = verdict[1], verdict[2]
                xml = (f"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>{error}"
                       f"</Code><Message>refused by the test proxy</Message></Error>")
                conn.sendall(f"HTTP/1.1 {code} Refused\r\nContent-Type: application/xml\r\n"
                             f"Content-Length: {len(xml)}\r\nConnection: close\r\n\r\n"
                             .encode() + xml.encode())
                return
            lines = [line for line in head.split(b"\r\n")
                     if not line.lower().startswith(b"connection:")]
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port),
                                                timeout=30)
            upstream.sendall(b"\r\n".join(lines) + b"\r\nConnection: close\r\n\r\n" + body)
            while True:
                chunk = upstream.recv(65536)
                if not chunk:
                    break
                conn.sendall(chunk)
            upstream.close()
        except OSError:
            pass
        finally:
            conn.close()

    def close(self):
        self.stopping = True
        self.thread.join(timeout=5)
        self.sock.close()
