"""A Web Push service for the tests: it plays the push service's side of RFC 8030 for browsers
whose keys it makes itself, and checks what a server sends with third-party code from PyPI:
the VAPID JWT (RFC 8292) with `cryptography`'s ECDSA, the aes128gcm payload (RFC 8291) with
`http_ece`. Every request is appended to a JSON-lines file, checked or not.

    python3 push_receiver.py PORT OUT_FILE NAME...

For each NAME it makes a browser's subscription (a P-256 key pair and a 16-byte auth secret) and
prints one line `ready {"NAME": {"endpoint", "p256dh", "auth"}, ...}`. A POST to /push/NAME is
checked and answered 201 (400 or 401 when a check fails); a POST to /gone/NAME answers 410 after
it is recorded (the browser unsubscribed).
"""
import base64
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def check_vapid(header, origin):
    """The claims of a valid `vapid t=JWT, k=KEY` header for `origin`; raises ValueError."""
    if not header or not header.startswith("vapid "):
        raise ValueError("no vapid Authorization header")
    params = dict(p.strip().split("=", 1) for p in header[len("vapid "):].split(","))
    token, key = params["t"], params["k"]
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64(key))
    head, claims, sig = token.split(".")
    if json.loads(unb64(head)).get("alg") != "ES256":
        raise ValueError("the JWT is not ES256")
    raw = unb64(sig)
    if len(raw) != 64:
        raise ValueError("an ES256 signature has 64 bytes")
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    try:
        public.verify(der, f"{head}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise ValueError("the JWT's signature does not verify with k")
    claims = json.loads(unb64(claims))
    if claims.get("aud") != origin:
        raise ValueError(f"aud {claims.get('aud')!r} is not {origin!r}")
    now = time.time()
    if not (now < claims.get("exp", 0) <= now + 24 * 3600):
        raise ValueError(f"exp {claims.get('exp')} is not within the next 24 hours")
    if not str(claims.get("sub", "")).startswith(("mailto:", "https:", "http:")):
        raise ValueError(f"sub {claims.get('sub')!r} is not a contact")
    return claims, key


def main():
    port, out, names = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    origin = f"http://127.0.0.1:{port}"
    browsers = {}
    for name in names:
        private = ec.generate_private_key(ec.SECP256R1())
        point = private.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        browsers[name] = {"private": private, "auth": os.urandom(16), "p256dh": b64(point)}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            _, kind, name = (self.path.split("/", 2) + ["", ""])[:3]
            record = {
                "path": self.path,
                "name": name,
                "ttl": self.headers.get("TTL"),
                "urgency": self.headers.get("Urgency"),
                "encoding": self.headers.get("Content-Encoding"),
            }
            status = 201
            try:
                browser = browsers[name]
                record["claims"], record["k"] = check_vapid(self.headers.get("Authorization"), origin)
                if record["encoding"] != "aes128gcm":
                    raise ValueError("Content-Encoding is not aes128gcm")
                plain = http_ece.decrypt(
                    body, private_key=browser["private"], auth_secret=browser["auth"], version="aes128gcm"
                )
                record["payload"] = json.loads(plain)
                record["ok"] = True
            except Exception as e:  # the record says why; the status tells the sender
                record["ok"] = False
                record["error"] = f"{type(e).__name__}: {e}"
                status = 401 if "JWT" in str(e) or "vapid" in str(e) or "aud" in str(e) else 400
            if kind == "gone":
                status = 410
            with open(out, "a", encoding="utf-8") as f:
                f.write(json.dumps(record) + "\n")
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    subscriptions = {
        name: {"endpoint": f"{origin}/push/{name}", "p256dh": b["p256dh"], "auth": b64(b["auth"])}
        for name, b in browsers.items()
    }
    print("ready " + json.dumps(subscriptions), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
