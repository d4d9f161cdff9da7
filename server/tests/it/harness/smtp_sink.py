"""A real SMTP server for the tests (aiosmtpd, from PyPI): every message it accepts is decoded and
appended to a JSON-lines file: envelope, headers, the plain-text and the HTML part.

    python3 smtp_sink.py PORT OUT_FILE
"""
import email
import json
import sys
import threading
from email import policy

from aiosmtpd.controller import Controller


class Sink:
    def __init__(self, out):
        self.out = out

    async def handle_DATA(self, server, session, envelope):
        msg = email.message_from_bytes(envelope.content, policy=policy.default)
        text = msg.get_body(preferencelist=("plain",))
        html = msg.get_body(preferencelist=("html",))
        record = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "from": str(msg["From"]),
            "to": str(msg["To"]),
            "subject": str(msg["Subject"]),
            "reply_to": str(msg["Reply-To"]) if msg["Reply-To"] else None,
            "multipart": msg.get_content_type(),
            "text": text.get_content() if text else None,
            "html": html.get_content() if html else None,
        }
        with open(self.out, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
        return "250 OK"


def main():
    port, out = int(sys.argv[1]), sys.argv[2]
    controller = Controller(Sink(out), hostname="127.0.0.1", port=port)
    controller.start()
    print("ready", flush=True)
    try:
        threading.Event().wait()
    finally:
        controller.stop()


if __name__ == "__main__":
    main()
